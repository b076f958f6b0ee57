"""What `make lm` runs (the plan), what it ran (the record) and the `lm:` settings of a command, all
resolved once at the command's edge into an :class:`LmSettings` value that the methods receive through
their Context.

The plan of `make lm` and `train` comes from their environment, so the runs can be sized to the machine
(dataset globs are comma-separated, patterns `;`-separated):
  LM_SEEDS         number of seeds (default 3: seeds 0, 1, 2)
  LM_PATTERNS      patterns (default the first two of lm.patterns.PATTERNS)
  LM_FINETUNE      model:globs;... which model fine-tunes on which datasets
                   (default `minilm:sherliic,levy_holt,levy_holt/*`; add `;mpnet:sherliic` for mpnet)
  LM_ALL_PATTERNS  datasets trained with every pattern (default `sherliic`); the others use the first
                   pattern only, and their ensemble row is left out (it would equal that pattern)
  LM_HYPOTHESIS_ONLY  datasets of the hypothesis-only probe (default `sherliic,levy_holt`)
  LM_MODELS        models `make lm` runs (default: every installed one, e.g. `minilm`)
  LM_EPOCHS        override the epochs; by default a run sees about EXAMPLES_PER_RUN training examples
                   (epochs = round(EXAMPLES_PER_RUN / n_train), between 1 and the model's epochs)
  LM_FOLDS         folds of every cross-fit (default 5, lm.crossfit)
  LM_FOLD_SCHEME   `tm` (default): folds matched to each benchmark's test overlap profile; `pd`: the strict
                   predicate-disjoint folds (evaluation.datasets.folds); their rows are tm_cv / pd_cv
  LM_SCORE_WITH    glob=source;...: datasets scored by another dataset's models (default
                   `levy_holt/*=levy_holt`: the subsets are re-splits of Levy/Holt's own items)
  LM_TRAIN_WITH    glob=dataset[,dataset];...: extra training data (e.g. `sherliic=levy_holt`)
  LM_DIRECTION     weight of the directional loss on pairs seen in both directions (default 0)
  LM_COSINE_SHARE  share of the zero-shot cosine in `lm:<m> fine-tuned + zero-shot` (default 0.75; the
                   rest is the fine-tuned probability, mean over the dataset's patterns and the seeds)
Process settings (any command): SHERLIIC_OUT (the run cache), LM_THREADS, LM_KEEP_WEIGHTS, SHERLIIC_LM_CACHE
(runs.RunSettings).

`make lm` records next to the run cache (<runs>/../plans.json, :class:`PlanRecord`) the plan behind every
(method, dataset) row it wrote, and its models. The other commands (`make baselines`, the learned
combination, the noisy labels) score the `lm:` methods by that record, never by the current environment:
a plain `make baselines` after a custom `make lm` shows the fine-tuned rows that exist
(:meth:`LmSettings.as_recorded`).
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from evaluation.datasets.folds import SCHEMES
from lm.models import DEFAULT_CACHE_DIR, MODELS
from lm.patterns import HYPOTHESIS_ONLY, PATTERNS, pattern_names
from lm.runs import RUNS_SUBDIR, Recipe, RunSettings
from warehouse.errors import ConfigurationError
from warehouse.settings import out_folder

DEFAULT_FINETUNE = "minilm:sherliic,levy_holt,levy_holt/*"  # mpnet: opt in, docs/lm.md
EXAMPLES_PER_RUN = 4000
# Per-model recipe defaults (measured on SherLIiC lm_dev, docs/lm.md).
BASE_RECIPE = {
    "minilm": Recipe(model="minilm", pattern="", epochs=5, lr=5e-5),
    "mpnet": Recipe(model="mpnet", pattern="", epochs=3, lr=2e-5),
}


def base_recipe(model: str) -> Recipe:
    """A model's recipe defaults; a local checkpoint (--model FOLDER) trains with MiniLM's."""
    return BASE_RECIPE.get(model) or replace(BASE_RECIPE["minilm"], model=model)


RECORD_FILE = "plans.json"  # beside the run cache folder: <runs>/../plans.json


def _globs(value: str) -> tuple[str, ...]:
    return tuple(g.strip() for g in value.split(",") if g.strip())


def _matches(dataset: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(dataset, g) for g in globs)


def _mapping(environ: Mapping[str, str], name: str, default: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`glob=a,b;glob2=c` -> ((glob, (a, b)), (glob2, (c,)))."""
    out = []
    for part in environ.get(name, default).split(";"):
        if part.strip():
            glob, sep, values = part.partition("=")
            if not sep or not _globs(values):
                raise ConfigurationError(f"{name}={environ.get(name)!r}: expected glob=dataset[,dataset];...")
            out.append((glob.strip(), _globs(values)))
    return tuple(out)


def _weight(environ: Mapping[str, str], name: str, default: str) -> float:
    value = environ.get(name) or default
    try:
        weight = float(value)
    except ValueError:
        weight = -1.0
    if weight < 0:
        raise ConfigurationError(f"{name}={value!r}: expected a number >= 0")
    return weight


def _count(environ: Mapping[str, str], name: str, default: str | None) -> int | None:
    value = environ.get(name) or default
    if value is None:
        return None
    if not value.strip().isdigit():
        raise ConfigurationError(f"{name}={value!r}: expected a whole number")
    return int(value)


def _scheme(environ: Mapping[str, str]) -> str:
    value = environ.get("LM_FOLD_SCHEME") or "tm"
    if value not in SCHEMES:
        raise ConfigurationError(f"LM_FOLD_SCHEME={value!r}: expected one of {', '.join(SCHEMES)}")
    return value


@dataclass(frozen=True)
class Plan:
    seeds: tuple[int, ...]
    patterns: tuple[str, ...]
    finetune: dict[str, tuple[str, ...]]  # model -> dataset globs it fine-tunes on
    all_patterns: tuple[str, ...] = ("sherliic",)
    hypothesis_only: tuple[str, ...] = ("sherliic", "levy_holt")
    epochs: int | None = None
    folds: int = 5
    fold_scheme: str = "tm"  # evaluation.datasets.folds.SCHEMES
    score_with: tuple[tuple[str, tuple[str, ...]], ...] = (("levy_holt/*", ("levy_holt",)),)
    train_with: tuple[tuple[str, tuple[str, ...]], ...] = ()
    direction: float = 0.0
    cosine_share: float = 0.75

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> Plan:
        """The plan the LM_* variables of `environ` describe (the defaults for those unset)."""
        seeds = tuple(range(_count(environ, "LM_SEEDS", "3")))
        names = environ.get("LM_PATTERNS")
        patterns = tuple(p.strip() for p in names.split(";")) if names else tuple(list(PATTERNS)[:2])
        for p in patterns:
            for name in pattern_names(p):  # "a | b": one run trained on both patterns
                if name not in PATTERNS:
                    raise ConfigurationError(
                        f"LM_PATTERNS: unknown pattern {name!r}; known: {'; '.join(PATTERNS)}"
                    )
        finetune: dict[str, tuple[str, ...]] = {}
        for part in environ.get("LM_FINETUNE", DEFAULT_FINETUNE).split(";"):
            if part.strip():
                model, _, globs = part.partition(":")
                finetune[model.strip()] = _globs(globs)
        return cls(
            seeds,
            patterns,
            finetune,
            all_patterns=_globs(environ.get("LM_ALL_PATTERNS", "sherliic")),
            hypothesis_only=_globs(environ.get("LM_HYPOTHESIS_ONLY", "sherliic,levy_holt")),
            epochs=_count(environ, "LM_EPOCHS", None),
            folds=max(2, _count(environ, "LM_FOLDS", "5")),
            fold_scheme=_scheme(environ),
            score_with=_mapping(environ, "LM_SCORE_WITH", "levy_holt/*=levy_holt"),
            train_with=_mapping(environ, "LM_TRAIN_WITH", ""),
            direction=_weight(environ, "LM_DIRECTION", "0"),
            cosine_share=min(1.0, _weight(environ, "LM_COSINE_SHARE", "0.75")),
        )

    def to_dict(self) -> dict:
        """The plan as JSON values (the record of what `make lm` ran)."""
        return {
            "seeds": list(self.seeds),
            "patterns": list(self.patterns),
            "finetune": {model: list(globs) for model, globs in sorted(self.finetune.items())},
            "all_patterns": list(self.all_patterns),
            "hypothesis_only": list(self.hypothesis_only),
            "epochs": self.epochs,
            "folds": self.folds,
            "fold_scheme": self.fold_scheme,
            "score_with": [[glob, list(values)] for glob, values in self.score_with],
            "train_with": [[glob, list(values)] for glob, values in self.train_with],
            "direction": self.direction,
            "cosine_share": self.cosine_share,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Plan:
        return cls(
            seeds=tuple(int(s) for s in data["seeds"]),
            patterns=tuple(data["patterns"]),
            finetune={model: tuple(globs) for model, globs in data["finetune"].items()},
            all_patterns=tuple(data["all_patterns"]),
            hypothesis_only=tuple(data["hypothesis_only"]),
            epochs=data.get("epochs"),
            folds=int(data.get("folds", 5)),
            fold_scheme=str(data.get("fold_scheme", "pd")),  # records written before tm had pd folds
            score_with=tuple((g, tuple(v)) for g, v in data.get("score_with", [])),
            train_with=tuple((g, tuple(v)) for g, v in data.get("train_with", [])),
            direction=float(data.get("direction", 0.0)),
            cosine_share=float(data.get("cosine_share", 0.75)),
        )

    def patterns_for(self, model: str, dataset: str) -> tuple[str, ...]:
        """The patterns (and HYPOTHESIS_ONLY) this model is fine-tuned with on this dataset."""
        if not _matches(dataset, self.finetune.get(model, ())):
            return ()
        chosen = self.patterns if _matches(dataset, self.all_patterns) else self.patterns[:1]
        return chosen + ((HYPOTHESIS_ONLY,) if _matches(dataset, self.hypothesis_only) else ())

    def recipe(self, model: str, pattern: str, seed: int, n_train: int) -> Recipe:
        """The recipe of a run on n_train items; a joint multi-pattern run sees each item once per pattern,
        so its epochs follow n_train x patterns (every run costs about the same)."""
        base = base_recipe(model)
        n_texts = max(1, n_train * len(pattern_names(pattern)))
        epochs = self.epochs or min(base.epochs, max(1, round(EXAMPLES_PER_RUN / n_texts)))
        direction = self.direction if pattern != HYPOTHESIS_ONLY else 0.0
        return replace(base, pattern=pattern, seed=seed, epochs=epochs, direction_weight=direction)

    def source(self, dataset: str) -> str:
        """The dataset whose models score this one (LM_SCORE_WITH; itself by default)."""
        for glob, values in self.score_with:
            if _matches(dataset, (glob,)) and values[0] != dataset:
                return values[0]
        return dataset

    def extra_training(self, dataset: str) -> tuple[str, ...]:
        """Datasets whose pools are added to this dataset's training items (LM_TRAIN_WITH)."""
        return tuple(d for glob, values in self.train_with if _matches(dataset, (glob,)) for d in values)


DEFAULT_PLAN = Plan.from_environment({})


def method_names(model: str, patterns: Iterable[str]) -> dict[str, str]:
    """The `lm:` method names of a model whose fine-tuned runs use these patterns."""
    names = {
        "zero-shot": f"lm:{model} zero-shot cosine",
        "hypothesis-only": f"lm:{model} hypothesis-only",
        "ensemble": f"lm:{model} fine-tuned (ensemble)",
        "mix": f"lm:{model} fine-tuned + zero-shot",
    }
    names.update({p: f"lm:{model} fine-tuned ({p})" for p in patterns})
    return names


def lm_method_names(plan: Plan) -> list[str]:
    """Every `lm:` method name of every model under a plan."""
    return [n for m in MODELS for n in method_names(m, plan.patterns).values()]


def _models(environ: Mapping[str, str]) -> tuple[str, ...]:
    """LM_MODELS (space/comma-separated), default every model; uninstalled ones are left out anyway."""
    chosen = tuple(environ.get("LM_MODELS", "").replace(",", " ").split())
    return chosen or tuple(MODELS)


def run_settings(environ: Mapping[str, str]) -> RunSettings:
    """Where runs are cached and how they are computed: the run cache under SHERLIIC_OUT (out/lm/runs),
    LM_THREADS, LM_KEEP_WEIGHTS, SHERLIIC_LM_CACHE."""
    out = Path(environ["SHERLIIC_OUT"]) if environ.get("SHERLIIC_OUT") else out_folder()
    return RunSettings(
        runs_dir=out / RUNS_SUBDIR,
        cache_dir=Path(environ.get("SHERLIIC_LM_CACHE") or DEFAULT_CACHE_DIR),
        threads=max(1, _count(environ, "LM_THREADS", "1")),
        keep_weights=environ.get("LM_KEEP_WEIGHTS", "1") != "0",
    )


@dataclass(frozen=True)
class PlanRecord:
    """What `make lm` ran: the plan behind each (method, dataset) row it wrote, and the models of its
    last run (the learned combination's LM features). Stored as JSON beside the run cache."""

    plans: Mapping[tuple[str, str], Plan] = field(default_factory=dict)
    models: tuple[str, ...] | None = None  # None: no `make lm` yet

    @staticmethod
    def path(runs_dir: Path) -> Path:
        return runs_dir.parent / RECORD_FILE

    @classmethod
    def read(cls, runs_dir: Path) -> PlanRecord:
        path = cls.path(runs_dir)
        if not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            plans = {(r["method"], r["dataset"]): Plan.from_dict(r["plan"]) for r in data["rows"]}
            models = tuple(data["models"]) if data.get("models") is not None else None
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(
                f"{path}: not a record of `make lm` ({exc}); delete it and run `make lm`"
            ) from None
        return cls(plans, models)

    def with_run(self, plan: Plan, models: Iterable[str], rows: Iterable[tuple[str, str]]) -> PlanRecord:
        """This record after a `make lm` that wrote these (method, dataset) rows with this plan."""
        plans = dict(self.plans)
        plans.update({key: plan for key in rows})
        return PlanRecord(plans, tuple(models))

    def write(self, runs_dir: Path) -> Path:
        path = self.path(runs_dir)
        rows = [
            {"method": method, "dataset": dataset, "plan": plan.to_dict()}
            for (method, dataset), plan in sorted(self.plans.items())
        ]
        data = {"models": None if self.models is None else list(self.models), "rows": rows}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)
        return path


@dataclass(frozen=True)
class LmSettings:
    """The `lm:` methods' settings of one command: the plan they score with, the models, the runs."""

    plan: Plan = DEFAULT_PLAN  # the plan of this command's runs (and of the rows the record lacks)
    # (method, dataset) -> the plan `make lm` scored that row with; the readers score by it
    recorded: Mapping[tuple[str, str], Plan] = field(default_factory=dict)
    models: tuple[str, ...] = tuple(MODELS)  # the models run; their zero-shot scores feed the combination
    run: RunSettings = field(default_factory=RunSettings)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> LmSettings:
        """`make lm` and `train`: the plan and models of the LM_* variables (module doc)."""
        environ = os.environ if environ is None else environ
        return cls(plan=Plan.from_environment(environ), models=_models(environ), run=run_settings(environ))

    @classmethod
    def as_recorded(cls, environ: Mapping[str, str] | None = None) -> LmSettings:
        """The readers of the run cache (`make baselines`, ...): the plans and models `make lm` ran, as
        recorded beside the cache (the default plan and every model before any `make lm`); only the
        process settings come from the environment."""
        environ = os.environ if environ is None else environ
        run = run_settings(environ)
        record = PlanRecord.read(run.runs_dir)
        return cls(recorded=dict(record.plans), models=record.models or tuple(MODELS), run=run)

    def plan_for(self, method: str, dataset: str) -> Plan:
        """The plan that scores `method` on `dataset`."""
        return self.recorded.get((method, dataset), self.plan)

    def plans(self) -> list[Plan]:
        """This command's plan and every recorded one (the method names to register)."""
        return [self.plan, *self.recorded.values()]

    def combination_features(self) -> list[str]:
        """LM methods the learned combination may use: the zero-shot ones of the models. Fine-tuned scores
        of training items are in-sample, so a combination trained on them would trust them too much."""
        return [method_names(m, ())["zero-shot"] for m in self.models]
