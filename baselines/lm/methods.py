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

Which plan scores a dataset (baselines.lm.plan): each method scores each dataset with
ctx.lm.plan_for(method, dataset), i.e. `make lm`'s own plan there, and in the other commands the plan
`make lm` recorded for that row (the default plan where it recorded none); never the current environment.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from baselines.evaluate import Evaluation
from baselines.lm.models import MODELS, model_dir, require_stack
from baselines.lm.patterns import HYPOTHESIS_ONLY, PATTERNS
from baselines.lm.plan import DEFAULT_PLAN, LmSettings, Plan, method_names
from baselines.lm.runs import Recipe, RunStats, TrainingSet, run_scores
from baselines.registry import REGISTRY, Context, register

ALLOW_COMPUTE = "lm_allow_compute"  # ctx.cache flag set by `make lm`: may train and score
DEFAULT_SETTINGS = LmSettings()


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


def lm_settings(ctx: Context) -> LmSettings:
    """The `lm:` settings of the command (the defaults when it gave none)."""
    return ctx.lm if ctx.lm is not None else DEFAULT_SETTINGS


def seed_scores(
    items: pd.DataFrame,
    model: str,
    pattern: str,
    seed: int,
    ctx: Context,
    plan: Plan,
    stats: RunStats | None = None,
) -> pd.Series:
    """One fine-tuned run's scores (NaN where the plan does not fine-tune this model on the dataset)."""
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
                settings=lm_settings(ctx).run,
                stats=stats,
                label=run_label(model, pattern, str(dataset), seed, plan.seeds),
            )
    return out


def fine_tuned_scores(
    items: pd.DataFrame,
    model: str,
    patterns: tuple[str, ...],
    ctx: Context,
    plan: Plan,
    seeds: tuple[int, ...] | None = None,
) -> pd.Series:
    """Mean probability over the seeds and the given patterns (NaN where one of them is not planned)."""
    runs = [seed_scores(items, model, p, s, ctx, plan) for p in patterns for s in (seeds or plan.seeds)]
    return pd.concat(runs, axis=1).mean(axis=1, skipna=False)


def ensemble_scores(
    items: pd.DataFrame, model: str, ctx: Context, plan: Plan, seeds: tuple[int, ...] | None = None
) -> pd.Series:
    """Mean over patterns and seeds, on the datasets trained with more than one pattern."""
    out = pd.Series(np.nan, index=items.index, dtype=float)
    for dataset, group in items.groupby("dataset", sort=True):
        patterns = tuple(p for p in plan.patterns_for(model, str(dataset)) if p != HYPOTHESIS_ONLY)
        if len(patterns) > 1:
            out[group.index] = fine_tuned_scores(group, model, patterns, ctx, plan, seeds)
    return out


def zero_shot_scores(items: pd.DataFrame, model: str, ctx: Context) -> pd.Series:
    scores = run_scores(
        Recipe.zero_shot(model),
        None,
        items["premise_text"].astype(str).tolist(),
        items["hypothesis_text"].astype(str).tolist(),
        allow_compute=bool(ctx.cache.get(ALLOW_COMPUTE)),
        settings=lm_settings(ctx).run,
    )
    return pd.Series(scores, index=items.index, dtype=float)


def by_plan(
    method: str, items: pd.DataFrame, ctx: Context, score: Callable[[pd.DataFrame, Plan], pd.Series]
) -> pd.Series:
    """`score(group, plan)` of each dataset's items under the plan of (method, dataset)."""
    settings = lm_settings(ctx)
    out = pd.Series(np.nan, index=items.index, dtype=float)
    for dataset, group in items.groupby("dataset", sort=True):
        out[group.index] = score(group, settings.plan_for(method, str(dataset)))
    return out


def _check(model: str, ctx: Context) -> None:
    """ModelMissing (skipped, with the install command) when the stack or the weights are absent."""
    require_stack()
    model_dir(model, lm_settings(ctx).run.cache_dir)


def _register_pattern(model: str, pattern: str) -> None:
    name = method_names(model, (pattern,))[pattern]

    def single(items: pd.DataFrame, ctx: Context) -> pd.Series:
        _check(model, ctx)
        return by_plan(
            name, items, ctx, lambda group, plan: fine_tuned_scores(group, model, (pattern,), ctx, plan)
        )

    register(
        name,
        tunable=True,
        on_top_of_lemma=False,
        description=f"{model} cross-encoder fine-tuned on the pattern '{PATTERNS[pattern]}' (seed mean)",
    )(single)


def _register_model(model: str) -> None:
    """The methods of one model under the default plan (register_methods adds other plans' patterns)."""
    names = method_names(model, DEFAULT_PLAN.patterns)

    @register(
        names["zero-shot"],
        tunable=True,
        on_top_of_lemma=False,
        description=f"cosine of {MODELS[model].hf_name} sentence embeddings (zero-shot, symmetric)",
    )
    def zero_shot(items: pd.DataFrame, ctx: Context) -> pd.Series:
        _check(model, ctx)
        return zero_shot_scores(items, model, ctx)

    patterns = DEFAULT_PLAN.patterns
    for pattern in patterns:
        _register_pattern(model, pattern)

    @register(
        names["ensemble"],
        tunable=True,
        on_top_of_lemma=False,
        description=f"{model} cross-encoders, mean over patterns {', '.join(patterns)} and seeds",
    )
    def ensemble(items: pd.DataFrame, ctx: Context) -> pd.Series:
        _check(model, ctx)
        return by_plan(
            names["ensemble"], items, ctx, lambda group, plan: ensemble_scores(group, model, ctx, plan)
        )

    @register(
        names["hypothesis-only"],
        tunable=True,
        on_top_of_lemma=False,
        description=f"{model} fine-tuned on the hypothesis alone (Li et al. 2022 artefact probe)",
    )
    def hypothesis_only(items: pd.DataFrame, ctx: Context) -> pd.Series:
        _check(model, ctx)
        return by_plan(
            names["hypothesis-only"],
            items,
            ctx,
            lambda group, plan: fine_tuned_scores(group, model, (HYPOTHESIS_ONLY,), ctx, plan),
        )


for _model in MODELS:
    _register_model(_model)


def register_methods(settings: LmSettings) -> None:
    """Register the fine-tuned method of each pattern of the settings' plans that is not registered yet
    (a custom LM_PATTERNS of `make lm`, or a pattern `make lm` recorded)."""
    for plan in settings.plans():
        for model in MODELS:
            for pattern in plan.patterns:
                if method_names(model, (pattern,))[pattern] not in REGISTRY:
                    _register_pattern(model, pattern)


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
