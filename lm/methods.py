"""The `lm:` baselines: which items train which run, and the registered score functions.

Methods (per model m of lm.models):
  lm:m zero-shot cosine          cosine of premise/hypothesis sentence embeddings; symmetric, so it cannot
                                 tell x -> y from y -> x (Li et al. 2022's point about directionality)
  lm:m fine-tuned (<pattern>)    cross-encoder on the pattern sentence; score = mean probability over seeds
  lm:m fine-tuned (ensemble)     mean probability over the patterns and seeds
  lm:m hypothesis-only           the same recipe on the hypothesis alone (Li et al. 2022's probe)
  lm:m fine-tuned + zero-shot    (1 - c) x the fine-tuned probability (mean over the dataset's patterns and
                                 the seeds) + c x the zero-shot cosine, c = LM_COSINE_SHARE (0.75): on
                                 unseen predicates the cosine is the better half (docs/lm.md)

Training data (lm.crossfit): each dataset's items are scored by the cross-fit of its source's
labelled pool (SherLIiC dev; Levy/Holt train+dev; a Levy/Holt subset: Levy/Holt's, LM_SCORE_WITH), plus the
extra pools of LM_TRAIN_WITH: pool items out of fold by the models of k folds (test-matched, or
predicate-disjoint with LM_FOLD_SCHEME=pd), every other item (the test files) by the model of the whole pool.
No item is scored by a model that saw it, so the harness's thresholds (tuned on training splits) are tuned
on out-of-sample scores.
zeichner and levy_holt_hosseini have no training data: not covered (NaN; `make lm` drops such rows).

Which plan scores a dataset (lm.plan): each method scores each dataset with
ctx.lm.plan_for(method, dataset), i.e. `make lm`'s own plan there, and in the other commands the plan
`make lm` recorded for that row (the default plan where it recorded none); never the current environment.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from evaluation.datasets import load_items
from evaluation.evaluate import Evaluation
from evaluation.registry import REGISTRY, Context, register
from lm.crossfit import CrossFit, Part
from lm.models import MODELS, model_dir, require_stack
from lm.patterns import HYPOTHESIS_ONLY, PATTERNS
from lm.plan import DEFAULT_PLAN, LmSettings, Plan, method_names
from lm.runs import Recipe, RunStats, run_scores
from lm.verifier import mix

ALLOW_COMPUTE = "lm_allow_compute"  # ctx.cache flag set by `make lm`: may train and score
DEFAULT_SETTINGS = LmSettings()


ITEMS = "lm_items"  # ctx.cache: the loaded benchmark items, where a dataset's models find their training data


def cross_fit(group: pd.DataFrame, dataset: str, plan: Plan, others: pd.DataFrame) -> CrossFit | None:
    """The cross-fit that scores `dataset` (its items: `group`) under the plan: the pool of its source
    (LM_SCORE_WITH; its own by default) plus the extra training data (LM_TRAIN_WITH), taken from `others`
    (items of other datasets); None when that pool is empty."""

    def items_of(name: str) -> pd.DataFrame:
        return group if name == dataset else others[others["dataset"] == name]

    source = plan.source(dataset)
    if source != dataset and items_of(source).empty:
        source = dataset  # the serving dataset is not loaded: the dataset's own pool
    extras = [items_of(d) for d in plan.extra_training(source) if d != source]
    extra = pd.concat(extras) if extras else None
    fit = CrossFit.of(source, items_of(source), extra, plan.folds, plan.fold_scheme)
    return fit if len(fit.pool) else None


def training_jobs(group: pd.DataFrame, plan: Plan, others: pd.DataFrame | None = None) -> list[Part]:
    """The models (cross-fit parts) that score one dataset's items (`group`, all of its splits); [] when
    it has no training data. `others`: items of the datasets its plan trains on (datasets_needed)."""
    dataset = str(group["dataset"].iloc[0])
    if dataset.startswith("levy_holt_hosseini") or dataset.startswith("zeichner"):
        return []
    others = others if others is not None else group.iloc[:0]
    fit = cross_fit(group, dataset, plan, others)
    return fit.parts(group) if fit is not None else []


def datasets_needed(dataset: str, plan: Plan) -> set[str]:
    """The datasets whose items the models of `dataset` need: itself, its source, their extra data."""
    source = plan.source(dataset)
    return {dataset, source, *plan.extra_training(source)}


def other_items(items: pd.DataFrame, ctx: Context, plan: Plan) -> pd.DataFrame:
    """Items of the datasets the plan trains `items`' datasets on that `items` lacks, from ctx.cache[ITEMS]
    (set by `make lm`) or else the Target's loaded benchmarks (read once per command)."""
    present = {str(d) for d in items["dataset"]}
    needed = set().union(*(datasets_needed(d, plan) for d in present)) - present
    if not needed:
        return items.iloc[:0]
    if ITEMS not in ctx.cache:
        if ctx.target is None:
            return items.iloc[:0]
        ctx.cache[ITEMS] = load_items(ctx.target)
    loaded = ctx.cache[ITEMS]
    return loaded[loaded["dataset"].isin(needed)]


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
    part: int | None = None,
    reverse: bool = False,
) -> pd.Series:
    """One seed's scores (NaN where the plan does not fine-tune this model on the dataset): each item by
    its out-of-fold cross-fit models (an item cut between two folds: their mean). `part`: compute only
    that model of each dataset (a parallel job); the others may stay missing then. `reverse`: the same
    models' scores of each pair presented the other way round (hypothesis => premise)."""
    out = pd.Series(np.nan, index=items.index, dtype=float)
    allow = bool(ctx.cache.get(ALLOW_COMPUTE))
    others = None
    for dataset in sorted({str(d) for d in items["dataset"]}):
        if pattern not in plan.patterns_for(model, dataset):
            continue
        others = other_items(items, ctx, plan) if others is None else others
        group = items[items["dataset"] == dataset]
        total = pd.Series(0.0, index=group.index)
        count = pd.Series(0, index=group.index)
        for number, job in enumerate(training_jobs(group, plan, pd.concat([items, others]))):
            if part is not None and number != part:
                continue
            scored = group.loc[job.index]
            first, second = (
                ("hypothesis_text", "premise_text") if reverse else ("premise_text", "hypothesis_text")
            )
            total[job.index] += run_scores(
                plan.recipe(model, pattern, seed, job.n_nominal),
                job.training,
                scored[first].astype(str).tolist(),
                scored[second].astype(str).tolist(),
                allow_compute=allow,
                settings=lm_settings(ctx).run,
                stats=stats,
                label=run_label(model, pattern, dataset, seed, plan.seeds)
                + ("" if job.fold is None else f" fold {job.fold + 1}"),
            )
            count[job.index] += 1
        scored_any = count > 0
        out[group.index[scored_any]] = (total[scored_any] / count[scored_any]).to_numpy()
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


def mix_scores(
    items: pd.DataFrame, model: str, ctx: Context, plan: Plan, seeds: tuple[int, ...] | None = None
):
    """(1 - c) x fine-tuned (mean over the dataset's patterns and the seeds) + c x zero-shot cosine."""
    out = pd.Series(np.nan, index=items.index, dtype=float)
    for dataset, group in items.groupby("dataset", sort=True):
        patterns = tuple(p for p in plan.patterns_for(model, str(dataset)) if p != HYPOTHESIS_ONLY)
        if patterns:
            tuned = fine_tuned_scores(group, model, patterns, ctx, plan, seeds)
            cosine = zero_shot_scores(group, model, ctx)
            out[group.index] = mix(tuned.to_numpy(), cosine.to_numpy(), plan.cosine_share)
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
        composite=True,
        description=f"{model} cross-encoders, mean over patterns {', '.join(patterns)} and seeds",
    )
    def ensemble(items: pd.DataFrame, ctx: Context) -> pd.Series:
        _check(model, ctx)
        return by_plan(
            names["ensemble"], items, ctx, lambda group, plan: ensemble_scores(group, model, ctx, plan)
        )

    @register(
        names["mix"],
        tunable=True,
        on_top_of_lemma=False,
        composite=True,
        description=f"{model}: 1/4 fine-tuned probability + 3/4 zero-shot cosine (LM_COSINE_SHARE)",
    )
    def mix(items: pd.DataFrame, ctx: Context) -> pd.Series:
        _check(model, ctx)
        return by_plan(names["mix"], items, ctx, lambda group, plan: mix_scores(group, model, ctx, plan))

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


def keep_rows(ev: Evaluation, only_lm: bool = False) -> Evaluation:
    """Drop rows that say nothing: no covered item (`only_lm`: touch `lm:` rows only, as
    `sherliic-baselines` does for the other methods' rows). No LM row is in-sample any more: a fine-tuned
    method scores the items of its training pool out of fold (cross-fitting)."""
    out = Evaluation(skipped=ev.skipped, failed=ev.failed)
    for row in ev.rows:
        key = (row["method"], row["dataset"], row["split"])
        if row["n_covered"] == 0 and (not only_lm or row["method"].startswith("lm:")):
            continue
        out.rows.append(row)
        out.curves[key] = ev.curves[key]
    return out
