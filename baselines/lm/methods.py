"""The `lm:` baselines: which items train which run, and the registered score functions.

Methods (per model m of baselines.lm.models):
  lm:m zero-shot cosine          cosine of premise/hypothesis sentence embeddings; symmetric, so it cannot
                                 tell x -> y from y -> x (Li et al. 2022's point about directionality)
  lm:m fine-tuned (<pattern>)    cross-encoder on the pattern sentence; score = mean probability over seeds
  lm:m fine-tuned (ensemble)     mean probability over the patterns and seeds
  lm:m hypothesis-only           the same recipe on the hypothesis alone (Li et al. 2022's probe)

Training data, per benchmark family (the harness passes one dataset at a time):
  sherliic             dev items with lm_split=train train the run that scores all dev items (its lm_dev row
                       is the reported one); all dev items train the run that scores the test items
  levy_holt, levy_holt/<subset>   that dataset's train split trains the run that scores all its items
  others (zeichner, levy_holt_hosseini)   not covered (NaN; `make lm` drops such empty rows)
Training items are scored by the model that saw them (in-sample; cross-fitting would cost 5x); the harness
tunes thresholds on them (lm_dev: lm_split=train; Levy/Holt dev: train), see docs/lm.md.

The plan comes from the environment, so `make lm` can be sized to the machine (dataset globs are
comma-separated, patterns `;`-separated):
  LM_SEEDS         number of seeds (default 3: seeds 0, 1, 2)
  LM_PATTERNS      patterns (default the first two of baselines.lm.patterns.PATTERNS)
  LM_FINETUNE      model:globs;... which model fine-tunes on which datasets
                   (default `minilm:sherliic,levy_holt,levy_holt/*`; add `;mpnet:sherliic` for mpnet)
  LM_ALL_PATTERNS  datasets trained with every pattern (default `sherliic`); the others use the first
                   pattern only, and their ensemble row is left out (it would equal that pattern)
  LM_HYPOTHESIS_ONLY  datasets of the hypothesis-only probe (default `sherliic,levy_holt`)
  LM_MODELS        models `make lm` runs (default: every installed one, e.g. `minilm`)
  LM_EPOCHS        override the epochs; by default a run sees about EXAMPLES_PER_RUN training examples
                   (epochs = round(EXAMPLES_PER_RUN / n_train), between 1 and the model's epochs)
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from baselines.evaluate import Evaluation
from baselines.lm.models import MODELS, require_stack
from baselines.lm.patterns import HYPOTHESIS_ONLY, PATTERNS
from baselines.lm.runs import Recipe, RunStats, TrainingSet, run_scores
from baselines.registry import Context, register

ALLOW_COMPUTE = "lm_allow_compute"  # ctx.cache flag set by `make lm`: may train and score
DEFAULT_FINETUNE = "minilm:sherliic,levy_holt,levy_holt/*"  # mpnet: opt in, docs/lm.md
EXAMPLES_PER_RUN = 4000
# Per-model recipe defaults (measured on SherLIiC lm_dev, docs/lm.md).
BASE_RECIPE = {
    "minilm": Recipe(model="minilm", pattern="", epochs=5, lr=5e-5),
    "mpnet": Recipe(model="mpnet", pattern="", epochs=3, lr=2e-5),
}


def _globs(value: str) -> tuple[str, ...]:
    return tuple(g.strip() for g in value.split(",") if g.strip())


def _matches(dataset: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(dataset, g) for g in globs)


@dataclass(frozen=True)
class Plan:
    seeds: tuple[int, ...]
    patterns: tuple[str, ...]
    finetune: dict[str, tuple[str, ...]]  # model -> dataset globs it fine-tunes on
    all_patterns: tuple[str, ...] = ("sherliic",)
    hypothesis_only: tuple[str, ...] = ("sherliic", "levy_holt")
    epochs: int | None = None

    @classmethod
    def from_env(cls) -> Plan:
        seeds = tuple(range(int(os.environ.get("LM_SEEDS", "3"))))
        names = os.environ.get("LM_PATTERNS")
        patterns = tuple(p.strip() for p in names.split(";")) if names else tuple(list(PATTERNS)[:2])
        for p in patterns:
            if p not in PATTERNS:
                raise ValueError(f"LM_PATTERNS: unknown pattern {p!r}; known: {'; '.join(PATTERNS)}")
        finetune: dict[str, tuple[str, ...]] = {}
        for part in os.environ.get("LM_FINETUNE", DEFAULT_FINETUNE).split(";"):
            if part.strip():
                model, _, globs = part.partition(":")
                finetune[model.strip()] = _globs(globs)
        epochs = int(os.environ["LM_EPOCHS"]) if os.environ.get("LM_EPOCHS") else None
        return cls(
            seeds,
            patterns,
            finetune,
            all_patterns=_globs(os.environ.get("LM_ALL_PATTERNS", "sherliic")),
            hypothesis_only=_globs(os.environ.get("LM_HYPOTHESIS_ONLY", "sherliic,levy_holt")),
            epochs=epochs,
        )

    def patterns_for(self, model: str, dataset: str) -> tuple[str, ...]:
        """The patterns (and HYPOTHESIS_ONLY) this model is fine-tuned with on this dataset."""
        if not _matches(dataset, self.finetune.get(model, ())):
            return ()
        chosen = self.patterns if _matches(dataset, self.all_patterns) else self.patterns[:1]
        return chosen + ((HYPOTHESIS_ONLY,) if _matches(dataset, self.hypothesis_only) else ())

    def recipe(self, model: str, pattern: str, seed: int, n_train: int) -> Recipe:
        base = BASE_RECIPE[model]
        epochs = self.epochs or min(base.epochs, max(1, round(EXAMPLES_PER_RUN / max(1, n_train))))
        return replace(base, pattern=pattern, seed=seed, epochs=epochs)


def _lm_split(items: pd.DataFrame) -> pd.Series:
    return items["extra"].map(lambda e: (e or {}).get("lm_split") if isinstance(e, dict) else None)


def _training_set(items: pd.DataFrame, description: str) -> TrainingSet:
    return TrainingSet(
        premises=items["premise_text"].astype(str).tolist(),
        hypotheses=items["hypothesis_text"].astype(str).tolist(),
        labels=items["label"].astype(bool).tolist(),
        description=f"{description} ({len(items)} items)",
    )


def training_jobs(group: pd.DataFrame) -> list[tuple[TrainingSet, pd.Index]]:
    """(training set, items it scores) for one dataset's items; [] when the dataset has no training data."""
    dataset = str(group["dataset"].iloc[0])
    if dataset == "sherliic":
        dev = group[group["split"] == "dev"]
        jobs = []
        lm = _lm_split(dev)
        if (lm == "train").any():
            jobs.append((_training_set(dev[lm == "train"], "sherliic dev lm_split=train"), dev.index))
        test = group[group["split"] == "test"]
        if len(test) and len(dev):
            jobs.append((_training_set(dev, "sherliic dev (all)"), test.index))
        return jobs
    if dataset.startswith("levy_holt") and not dataset.startswith("levy_holt_hosseini"):
        train = group[group["split"] == "train"]
        if len(train):
            return [(_training_set(train, f"{dataset} train"), group.index)]
    return []


def run_label(model: str, pattern: str, dataset: str, seed: int, seeds: tuple[int, ...]) -> str:
    """How progress bars name a run, e.g. `lm:minilm 'y because x' levy_holt seed 1 (2/3)`."""
    position = f" ({seeds.index(seed) + 1}/{len(seeds)})" if seed in seeds else ""
    return f"lm:{model} '{pattern}' {dataset} seed {seed}{position}"


def seed_scores(
    items: pd.DataFrame,
    model: str,
    pattern: str,
    seed: int,
    ctx: Context,
    plan: Plan | None = None,
    stats: RunStats | None = None,
) -> pd.Series:
    """One fine-tuned run's scores (NaN where the plan does not fine-tune this model on the dataset)."""
    plan = plan or Plan.from_env()
    out = pd.Series(np.nan, index=items.index, dtype=float)
    allow = bool(ctx.cache.get(ALLOW_COMPUTE))
    for dataset, group in items.groupby("dataset", sort=True):
        if pattern not in plan.patterns_for(model, str(dataset)):
            continue
        for training, target in training_jobs(group):
            scored = group.loc[target]
            out[target] = run_scores(
                plan.recipe(model, pattern, seed, len(training.labels)),
                training,
                scored["premise_text"].astype(str).tolist(),
                scored["hypothesis_text"].astype(str).tolist(),
                allow_compute=allow,
                stats=stats,
                label=run_label(model, pattern, str(dataset), seed, plan.seeds),
            )
    return out


def fine_tuned_scores(
    items: pd.DataFrame,
    model: str,
    patterns: tuple[str, ...],
    ctx: Context,
    seeds: tuple[int, ...] | None = None,
) -> pd.Series:
    """Mean probability over the seeds and the given patterns (NaN where one of them is not planned)."""
    plan = Plan.from_env()
    runs = [seed_scores(items, model, p, s, ctx, plan) for p in patterns for s in (seeds or plan.seeds)]
    return pd.concat(runs, axis=1).mean(axis=1, skipna=False)


def ensemble_scores(
    items: pd.DataFrame, model: str, ctx: Context, seeds: tuple[int, ...] | None = None
) -> pd.Series:
    """Mean over patterns and seeds, on the datasets trained with more than one pattern."""
    plan = Plan.from_env()
    out = pd.Series(np.nan, index=items.index, dtype=float)
    for dataset, group in items.groupby("dataset", sort=True):
        patterns = tuple(p for p in plan.patterns_for(model, str(dataset)) if p != HYPOTHESIS_ONLY)
        if len(patterns) > 1:
            out[group.index] = fine_tuned_scores(group, model, patterns, ctx, seeds)
    return out


def zero_shot_scores(items: pd.DataFrame, model: str, ctx: Context) -> pd.Series:
    scores = run_scores(
        Recipe.zero_shot(model),
        None,
        items["premise_text"].astype(str).tolist(),
        items["hypothesis_text"].astype(str).tolist(),
        allow_compute=bool(ctx.cache.get(ALLOW_COMPUTE)),
    )
    return pd.Series(scores, index=items.index, dtype=float)


def _check(model: str) -> None:
    """ModelMissing (skipped, with the install command) when the stack or the weights are absent."""
    require_stack()
    from baselines.lm.models import model_dir

    model_dir(model)


def method_names(model: str) -> dict[str, str]:
    plan_patterns = Plan.from_env().patterns
    names = {
        "zero-shot": f"lm:{model} zero-shot cosine",
        "hypothesis-only": f"lm:{model} hypothesis-only",
        "ensemble": f"lm:{model} fine-tuned (ensemble)",
    }
    names.update({p: f"lm:{model} fine-tuned ({p})" for p in plan_patterns})
    return names


def _register_model(model: str) -> None:
    names = method_names(model)

    @register(
        names["zero-shot"],
        tunable=True,
        on_top_of_lemma=False,
        description=f"cosine of {MODELS[model].hf_name} sentence embeddings (zero-shot, symmetric)",
    )
    def zero_shot(items: pd.DataFrame, ctx: Context) -> pd.Series:
        _check(model)
        return zero_shot_scores(items, model, ctx)

    patterns = Plan.from_env().patterns
    for pattern in patterns:

        def single(items: pd.DataFrame, ctx: Context, pattern: str = pattern) -> pd.Series:
            _check(model)
            return fine_tuned_scores(items, model, (pattern,), ctx)

        register(
            names[pattern],
            tunable=True,
            on_top_of_lemma=False,
            description=f"{model} cross-encoder fine-tuned on the pattern '{PATTERNS[pattern]}' (seed mean)",
        )(single)

    @register(
        names["ensemble"],
        tunable=True,
        on_top_of_lemma=False,
        description=f"{model} cross-encoders, mean over patterns {', '.join(patterns)} and seeds",
    )
    def ensemble(items: pd.DataFrame, ctx: Context) -> pd.Series:
        _check(model)
        return ensemble_scores(items, model, ctx)

    @register(
        names["hypothesis-only"],
        tunable=True,
        on_top_of_lemma=False,
        description=f"{model} fine-tuned on the hypothesis alone (Li et al. 2022 artefact probe)",
    )
    def hypothesis_only(items: pd.DataFrame, ctx: Context) -> pd.Series:
        _check(model)
        return fine_tuned_scores(items, model, (HYPOTHESIS_ONLY,), ctx)


for _model in MODELS:
    _register_model(_model)


def lm_method_names() -> list[str]:
    return [n for m in MODELS for n in method_names(m).values()]


def selected_models() -> list[str]:
    """LM_MODELS (space/comma-separated), default every model; uninstalled ones are left out anyway."""
    chosen = os.environ.get("LM_MODELS", "").replace(",", " ").split()
    return chosen or list(MODELS)


def combination_features() -> list[str]:
    """LM methods the learned combination may use: the zero-shot ones of the selected models. Fine-tuned
    scores of training items are in-sample, so a combination trained on them would trust them too much."""
    return [method_names(m)["zero-shot"] for m in selected_models()]


def _in_sample(method: str) -> bool:
    """Fine-tuned methods scored their own training items; SherLIiC's full-dev row mixes those in."""
    return method.startswith("lm:") and "zero-shot" not in method


def keep_rows(ev: Evaluation, only_lm: bool = False) -> Evaluation:
    """Drop rows that say nothing: no covered item, or the in-sample SherLIiC dev row of a fine-tuned LM
    (`only_lm`: touch `lm:` rows only, as `sherliic-baselines` does for the other methods' rows)."""
    out = Evaluation(skipped=ev.skipped, failed=ev.failed)
    for row in ev.rows:
        key = (row["method"], row["dataset"], row["split"])
        uninformative = row["n_covered"] == 0 and (not only_lm or row["method"].startswith("lm:"))
        if uninformative or (_in_sample(row["method"]) and key[1:] == ("sherliic", "dev")):
            continue
        out.rows.append(row)
        out.curves[key] = ev.curves[key]
    return out
