"""Recipes and the run cache: trained weights and scores on disk, keyed by (model, recipe, training items).

A run is one fine-tuned cross-encoder (or the zero-shot encoder, which has no training items). Its folder
out/lm/runs/<key>/ holds recipe.json, scores.json (pair -> probability, pair = "premise<TAB>hypothesis")
and, for fine-tuned runs, weights.safetensors. `run_scores` returns the scores of the pairs asked for:
cached pairs are read, missing ones are scored with the cached weights or, without them, after training.
Training and scoring happen only when the caller allows it (`make lm`); otherwise a missing score raises
ResourceMissing, so `make baselines` reuses what `make lm` computed and never trains. Where the runs live
and how they are computed (:class:`RunSettings`) is resolved once at a command's edge
(lm.plan.LmSettings) and passed down, to worker processes too.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from evaluation.registry import ResourceMissing
from lm.models import DEFAULT_CACHE_DIR, get_model, require_stack
from lm.patterns import pattern_names, render
from warehouse.settings import out_folder

if TYPE_CHECKING:
    from lm.encoder import TrainSettings

RUNS_SUBDIR = Path("lm") / "runs"  # the run cache, under the output folder
ZERO_SHOT = "zero-shot cosine"


@dataclass(frozen=True)
class RunSettings:
    """Where runs are cached and how they are computed (a command's LM_* process settings)."""

    runs_dir: Path = field(default_factory=lambda: out_folder() / RUNS_SUBDIR)  # the run cache
    cache_dir: Path = DEFAULT_CACHE_DIR  # SHERLIIC_LM_CACHE: the unpacked models
    threads: int = 1  # LM_THREADS: torch threads per process
    keep_weights: bool = True  # LM_KEEP_WEIGHTS=0: keep no weights.safetensors


@dataclass(frozen=True)
class Recipe:
    """Everything that determines a run's scores, besides the training items."""

    model: str
    pattern: str  # a key of patterns.PATTERNS, patterns.HYPOTHESIS_ONLY, or ZERO_SHOT
    seed: int = 0
    epochs: int = 3
    batch_size: int = 16
    lr: float = 3e-5
    head_lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.1
    max_length: int = 64
    version: int = 1  # bump when the training code changes in a way that changes scores
    # weight of the directional loss on the training pairs present in both directions with opposite
    # labels (x => y true, y => x false): -log sigmoid(logit(x, y) - logit(y, x)), beside the BCE
    direction_weight: float = 0.0

    @classmethod
    def zero_shot(cls, model: str) -> Recipe:
        return cls(model=model, pattern=ZERO_SHOT, seed=0, epochs=0)

    @property
    def patterns(self) -> tuple[str, ...]:
        """The patterns of this run: one, or several trained jointly (patterns.JOINT)."""
        return pattern_names(self.pattern)

    def with_seed(self, seed: int) -> Recipe:
        return replace(self, seed=seed)

    def train_settings(self) -> TrainSettings:
        """The encoder's training settings of this recipe."""
        from lm.encoder import TrainSettings  # torch: imported only when training

        return TrainSettings(
            epochs=self.epochs,
            batch_size=self.batch_size,
            lr=self.lr,
            head_lr=self.head_lr,
            weight_decay=self.weight_decay,
            warmup=self.warmup,
            max_length=self.max_length,
            seed=self.seed,
        )


def pair_key(premise: str, hypothesis: str) -> str:
    return f"{premise}\t{hypothesis}"


def _label_text(label: float) -> str:
    """A label in a training hash: 0 / 1 for a gold label, 6 decimals for a teacher's soft label."""
    return str(int(label)) if float(label) in (0.0, 1.0) else f"{float(label):.6f}"


def training_hash(premises: Sequence[str], hypotheses: Sequence[str], labels: Sequence[float]) -> str:
    """Order-independent hash of the training items (text pair + label)."""
    rows = sorted(f"{p}\t{h}\t{_label_text(y)}" for p, h, y in zip(premises, hypotheses, labels, strict=True))
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


# Recipe fields added after runs were cached: left out of the key at their default, so the runs cached
# before them keep their keys.
LATER_FIELDS = {"direction_weight": 0.0}


def run_key(recipe: Recipe, train_hash: str) -> str:
    fields = {k: v for k, v in asdict(recipe).items() if k not in LATER_FIELDS or v != LATER_FIELDS[k]}
    payload = json.dumps({"recipe": fields, "train": train_hash}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def _normalized(text: str) -> str:
    return " ".join(str(text).lower().split())


def direction_pairs(training: TrainingSet) -> list[tuple[int, int]]:
    """(i, j): item i is true, item j is its reverse (premise and hypothesis swapped) and false — the
    pairs a directional loss contrasts (Levy/Holt has ~300 such pairs in train+dev, DirTrue/DirFalse)."""
    index = {}
    for j, (p, h) in enumerate(zip(training.premises, training.hypotheses, strict=True)):
        index.setdefault((_normalized(p), _normalized(h)), j)
    pairs = []
    for i, (p, h, y) in enumerate(zip(training.premises, training.hypotheses, training.labels, strict=True)):
        j = index.get((_normalized(h), _normalized(p)))
        if y == 1 and j is not None and training.labels[j] == 0:
            pairs.append((i, j))
    return pairs


@dataclass
class TrainingSet:
    premises: list[str]
    hypotheses: list[str]
    labels: list[float]  # gold labels (bool), or a teacher's probabilities (lm.distill)
    description: str  # e.g. "sherliic lm_split=train (796 items)"

    @property
    def hash(self) -> str:
        return training_hash(self.premises, self.hypotheses, self.labels)


@dataclass
class RunStats:
    """What a call did (the tests and `make bench-lm` read it)."""

    trained: bool = False
    train_seconds: float = 0.0
    scored: int = 0
    from_cache: int = 0


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def run_scores(
    recipe: Recipe,
    training: TrainingSet | None,
    premises: Sequence[str],
    hypotheses: Sequence[str],
    *,
    allow_compute: bool,
    settings: RunSettings = RunSettings(),
    show_progress: bool = True,
    stats: RunStats | None = None,
    label: str | None = None,
    store: bool = True,
) -> np.ndarray:
    """Scores of the pairs (aligned with `premises`) under `recipe`, trained on `training` if fine-tuned,
    cached under settings.runs_dir. `label` names the run in progress bars and messages (default: model,
    pattern and seed). `store=False`: the newly scored pairs are not added to the run's scores.json (a
    caller that keeps its own scores, e.g. for many thousands of pairs)."""
    get_model(recipe.model)  # unknown model: KeyError before anything else
    stats = stats if stats is not None else RunStats()
    zero_shot = recipe.pattern == ZERO_SHOT
    if not zero_shot and training is None:
        raise ValueError(f"recipe {recipe} needs training items")
    key = run_key(recipe, "" if zero_shot else training.hash)
    folder = settings.runs_dir / key
    scores: dict[str, float] = _read_json(folder / "scores.json")
    pairs = [pair_key(p, h) for p, h in zip(premises, hypotheses, strict=True)]
    todo = sorted({k for k in pairs if k not in scores})
    stats.from_cache += len(pairs) - sum(1 for k in pairs if k in set(todo))
    if todo:
        label = label or f"lm:{recipe.model} {recipe.pattern}" + ("" if zero_shot else f" seed {recipe.seed}")
        if not allow_compute:
            raise ResourceMissing(
                f"{label}: {len(todo)} pairs not scored yet; run `make lm` (it trains and caches)"
            )
        require_stack()
        from lm import encoder  # torch: imported only when computing

        encoder.set_threads(settings.threads)
        todo_p = [k.split("\t", 1)[0] for k in todo]
        todo_h = [k.split("\t", 1)[1] for k in todo]
        if zero_shot:
            new = encoder.cosine_scores(
                recipe.model, todo_p, todo_h, show_progress=show_progress, cache_dir=settings.cache_dir
            )
        else:
            model = _trained(recipe, training, folder, settings, stats, show_progress, label)
            new = np.mean(  # a joint multi-pattern run: the mean probability over its patterns
                [
                    encoder.predict(
                        model,
                        recipe.model,
                        [render(name, p, h) for p, h in zip(todo_p, todo_h, strict=True)],
                        max_length=recipe.max_length,
                        show_progress=show_progress,
                        desc=f"scoring {label}",
                        cache_dir=settings.cache_dir,
                    )
                    for name in recipe.patterns
                ],
                axis=0,
            )
        scores.update(zip(todo, (float(v) for v in new), strict=True))
        stats.scored += len(todo)
        if not store:
            return np.array([scores[k] for k in pairs], dtype=float)
        _write_json(
            folder / "recipe.json",
            {"recipe": asdict(recipe), "key": key, "training": None if zero_shot else training.description},
        )
        _write_json(folder / "scores.json", scores)
    return np.array([scores[k] for k in pairs], dtype=float)


def run_folder(recipe: Recipe, training: TrainingSet | None, settings: RunSettings | None = None) -> Path:
    """The cache folder of a run (recipe.json, scores.json, weights.safetensors)."""
    settings = settings or RunSettings()
    return settings.runs_dir / run_key(recipe, "" if training is None else training.hash)


def trained_weights(
    recipe: Recipe,
    training: TrainingSet,
    *,
    allow_compute: bool,
    settings: RunSettings | None = None,
    show_progress: bool = True,
    label: str | None = None,
) -> Path:
    """The weights file of a fine-tuned run, training it first if missing (and allowed)."""
    settings = settings or RunSettings()
    folder = run_folder(recipe, training, settings)
    weights = folder / "weights.safetensors"
    if weights.is_file():
        return weights
    label = label or f"lm:{recipe.model} {recipe.pattern} seed {recipe.seed}"
    if not allow_compute:
        raise ResourceMissing(f"{label}: not trained yet; run `make lm` (it trains and caches)")
    if not settings.keep_weights:
        raise ResourceMissing(f"{label}: weights are needed, and LM_KEEP_WEIGHTS=0 keeps none")
    require_stack()
    from lm import encoder  # torch: imported only when computing

    encoder.set_threads(settings.threads)
    _trained(recipe, training, folder, settings, RunStats(), show_progress, label)
    _write_json(
        folder / "recipe.json",
        {"recipe": asdict(recipe), "key": folder.name, "training": training.description},
    )
    return weights


def _trained(
    recipe: Recipe,
    training: TrainingSet,
    folder: Path,
    settings: RunSettings,
    stats: RunStats,
    show_progress: bool,
    label: str,
):
    from lm import encoder  # torch: imported only when computing

    weights = folder / "weights.safetensors"
    if weights.is_file():
        return encoder.load_weights(recipe.model, weights, settings.cache_dir)
    n = len(training.labels)
    # a joint run: every item once per pattern (block b = pattern b), the same labels and pairs per block
    texts = [
        render(name, p, h)
        for name in recipe.patterns
        for p, h in zip(training.premises, training.hypotheses, strict=True)
    ]
    pairs = direction_pairs(training) if recipe.direction_weight > 0 else []
    start = time.perf_counter()
    model = encoder.fine_tune(
        recipe.model,
        texts,
        list(training.labels) * len(recipe.patterns),
        recipe.train_settings(),
        pairs=[(i + b * n, j + b * n) for b in range(len(recipe.patterns)) for i, j in pairs],
        pair_weight=recipe.direction_weight,
        show_progress=show_progress,
        desc=f"{label} on {len(texts)}",
        cache_dir=settings.cache_dir,
    )
    stats.trained = True
    stats.train_seconds = time.perf_counter() - start
    _write_json(
        folder / "training.json",
        {
            "seconds": stats.train_seconds,
            "n_items": len(texts),
            "training": training.description,
            "threads": encoder.torch.get_num_threads(),
            "direction_pairs": len(pairs),
        },
    )
    if settings.keep_weights:
        encoder.save_weights(model, weights)
    return model


def cached_runs(runs_dir: Path) -> list[dict]:
    """One row per trained run in the cache (model, pattern, seed, epochs, training set, seconds, threads),
    read from its recipe.json and training.json: what `make lm` cost, for out/lm/runs.md."""
    rows = []
    for folder in sorted(runs_dir.glob("*/training.json")):
        run = _read_json(folder.parent / "recipe.json")
        training = _read_json(folder)
        recipe = run.get("recipe", {})
        rows.append(
            {
                "model": recipe.get("model"),
                "pattern": recipe.get("pattern"),
                "seed": recipe.get("seed"),
                "epochs": recipe.get("epochs"),
                "training": training.get("training"),
                "n_items": training.get("n_items"),
                "seconds": round(float(training.get("seconds", 0.0)), 1),
                "threads": training.get("threads"),
            }
        )
    return rows
