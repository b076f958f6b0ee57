"""Selection: every candidate configuration judged on folds of the labelled pools that mirror the tests.

A candidate is a VerifierSpec (model, patterns, training data, directional loss, epochs, seeds) and a fold
scheme (evaluation.datasets.folds: `tm`, matched to each benchmark's test overlap profile, the selection
folds; `pd`, predicate-disjoint, the strict view). For each seed, its cross-fit (lm.crossfit)
scores every pool item out of fold. The figures (split `tm_cv` / `pd_cv`) are computed on the items inside
a fold (`pd` leaves the cut ones out):
  - P/R/F1 with cross-fitted thresholds (fold f judged by the F1-optimal threshold of the other folds,
    evaluation.metrics.cross_fitted_predictions), so no threshold sees the items it judges;
  - AUC(p≥.5), AUC_norm and ROC AUC of the pooled out-of-fold scores;
  - the overlap profile of the judged items against their fold models' training items (pair / both /
    any predicate seen, %), printed beside the figures.
A Levy/Holt candidate is also judged on every directional subset it serves (the subsets are re-splits of
Levy/Holt's own train+dev items; each subset item keeps the fold of its Levy/Holt item). Per seed rows,
the seed ensemble (mean probability over seeds, `seed` = "mean"), and variants that need no training
(VARIANTS): the zero-shot cosine mixed in with a share, and the pair presented in both orders.

`old_split_rows` reproduces the protocol used before (train on SherLIiC lm_split=train / Levy/Holt train,
report lm_dev / dev, threshold tuned on the training items the model saw) for the same candidate.

`python -m lm.cli select` runs one candidate and merges its rows into out/lm/selection.csv;
lm.selection_report writes out/lm/selection.md and the cost plot from that file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from evaluation import metrics
from evaluation.datasets.folds import SPLITS, pool_mask
from evaluation.evaluate import Evaluation
from evaluation.registry import Baseline, Context, ResourceMissing
from lm.jobs import fill_cache, planned_jobs
from lm.methods import (
    ALLOW_COMPUTE,
    ITEMS,
    cross_fit,
    lm_settings,
    other_items,
    seed_scores,
    zero_shot_scores,
)
from lm.plan import LmSettings, Plan
from lm.runs import TrainingSet, run_folder, run_scores
from lm.verifier import VerifierSpec, fold_verifier, mix, score_pairs

METRICS = ["precision", "recall", "f1", "auc_pr50", "auc_norm", "roc_auc"]
PROFILE = ["pair", "both", "any"]
SELECTION_COLUMNS = [
    "candidate",
    "variant",
    "protocol",
    "dataset",
    "seed",
    "n_items",
    "n_cut",
    *METRICS,
    *PROFILE,
    "epochs",
    "train_examples",
    "train_seconds",
]


@dataclass(frozen=True)
class Variant:
    """A way to score with the candidate's trained runs: `cosine` = the share of the model's zero-shot
    cosine mixed in (lm.verifier.mix); `reverse` = weight w of the pair presented the other way
    round, score = (p(x ⇒ y) − w · p(y ⇒ x) + w) / (1 + w): a model that learnt a direction then scores
    x ⇒ y above y ⇒ x (Levy/Holt's DirTrue vs DirFalse items are such pairs)."""

    cosine: float = 0.0
    reverse: float = 0.0

    @property
    def name(self) -> str:
        if self.cosine == 1:  # the fine-tuned runs take no part: the model's zero-shot cosine alone
            return "zero-shot cosine"
        parts = ([f"cosine {self.cosine:g}"] if self.cosine else []) + (
            [f"both orders {self.reverse:g}"] if self.reverse else []
        )
        return ", ".join(parts) or "fine-tuned"

    def apply(self, forward: pd.Series, reverse: pd.Series | None, cosine: pd.Series | None) -> pd.Series:
        score = forward
        if self.reverse:
            score = (forward - self.reverse * reverse + self.reverse) / (1 + self.reverse)
        if self.cosine:
            score = pd.Series(mix(score.to_numpy(), cosine.to_numpy(), self.cosine), index=score.index)
        return score


def candidate_name(spec: VerifierSpec) -> str:
    """e.g. `minilm [x, which means that y] sherliic+levy_holt direction 0.5 epochs 2`, a student's with
    its teacher: `... distilled from mpnet [x, which means that y] seeds 0,1,2 + cosine 0.75`."""

    def knobs(s: VerifierSpec) -> str:
        return (f" direction {s.direction:g}" if s.direction else "") + (
            f" epochs {s.epochs}" if s.epochs else ""
        )

    name = f"{spec.model} [{'; '.join(spec.patterns)}] {'+'.join((spec.dataset, *spec.extra))}{knobs(spec)}"
    if spec.teacher is None:
        return name
    teacher = spec.teacher
    seeds = ",".join(str(s) for s in teacher.seeds)
    cosine = f" + cosine {teacher.cosine_share:g}" if teacher.cosine_share else ""
    patterns = "; ".join(teacher.patterns)
    return f"{name} distilled from {teacher.model} [{patterns}]{knobs(teacher)} seeds {seeds}{cosine}"


def served(spec: VerifierSpec, loaded: list[str]) -> list[str]:
    """The datasets a candidate is judged on: its own, and for Levy/Holt every loaded subset."""
    if spec.dataset == "levy_holt":
        return ["levy_holt", *sorted(d for d in loaded if d.startswith("levy_holt/"))]
    return [spec.dataset]


def candidate_plan(spec: VerifierSpec, evaluated: list[str], scheme: str = "tm") -> Plan:
    """The plan that fine-tunes the candidate on its dataset and scores the datasets it serves with it."""
    others = [d for d in evaluated if d != spec.dataset]
    return replace(
        spec.plan(),
        finetune={spec.model: tuple(evaluated)},
        all_patterns=tuple(evaluated),
        score_with=tuple((d, (spec.dataset,)) for d in others),
        fold_scheme=scheme,
    )


def _pool_items(items: pd.DataFrame, datasets: set[str]) -> pd.DataFrame:
    """The labelled pools of these datasets: selection never reads a test file."""
    return items[items["dataset"].isin(datasets) & pool_mask(items)]


@dataclass
class CandidateScores:
    """Out-of-fold scores of a candidate's pool items: per seed the mean over its patterns, the same
    models' scores of the reversed pairs (when asked for), the zero-shot cosine (when asked for), and the
    training cost (mean seconds per fold model, from each run's training.json)."""

    spec: VerifierSpec
    scheme: str
    judged: pd.DataFrame
    forward: dict[int, pd.Series]
    reverse: dict[int, pd.Series] = field(default_factory=dict)
    cosine: pd.Series | None = None
    epochs: int = 0
    train_examples: float = float("nan")
    train_seconds: float = float("nan")


def honest_scores(
    spec: VerifierSpec,
    items: pd.DataFrame,
    settings: LmSettings,
    *,
    workers: int = 1,
    train: bool = True,
    scheme: str = "tm",
    reverse: bool = False,
    cosine: bool = False,
) -> CandidateScores:
    """The candidate's out-of-fold scores of the pools it is judged on (trained first when `train`)."""
    evaluated = served(spec, sorted({str(d) for d in items["dataset"]}))
    plan = candidate_plan(spec, evaluated, scheme)
    needed = _pool_items(items, {*evaluated, *spec.extra})
    judged = needed[needed["dataset"].isin(evaluated)]
    settings = replace(settings, plan=plan, models=(spec.model,))
    if spec.teacher is not None:
        out = _student_scores(spec, scheme, judged, needed, settings, train=train, reverse=reverse)
    else:
        out = _cross_fit_scores(
            spec,
            scheme,
            judged,
            needed,
            settings,
            train=train,
            reverse=reverse,
            cosine=cosine,
            workers=workers,
        )
    if cosine:
        ctx = Context(lm=settings)
        ctx.cache[ALLOW_COMPUTE] = train
        out.cosine = zero_shot_scores(judged, spec.model, ctx)
    return out


def _cross_fit_scores(
    spec: VerifierSpec,
    scheme: str,
    judged: pd.DataFrame,
    needed: pd.DataFrame,
    settings: LmSettings,
    *,
    train: bool,
    reverse: bool,
    cosine: bool,
    workers: int,
) -> CandidateScores:
    """A candidate's runs trained in parallel (lm.jobs) and read back through the harness's
    cross-fit (lm.methods.seed_scores)."""
    plan = settings.plan
    source_items = needed[needed["dataset"].isin({spec.dataset, *spec.extra})]
    if train:  # the candidate's own dataset only: the served subsets reuse its runs (their pairs are its)
        jobs = [
            j
            for j in planned_jobs(source_items, [spec.model], plan, zero_shot=cosine, fine_tuned=True)
            if j.dataset in (spec.dataset, "*")
        ]
        fill_cache(needed if cosine else source_items, jobs, settings, workers)
    ctx = Context(lm=settings)
    ctx.cache[ALLOW_COMPUTE] = train
    ctx.cache[ITEMS] = needed
    out = CandidateScores(spec, scheme, judged, {})
    for seed in spec.seeds:
        for direction, store in [(False, out.forward)] + ([(True, out.reverse)] if reverse else []):
            runs = [
                seed_scores(judged, spec.model, p, seed, ctx, plan, reverse=direction) for p in spec.patterns
            ]
            store[seed] = pd.concat(runs, axis=1).mean(axis=1, skipna=False)
    fit = cross_fit(source_items[source_items["dataset"] == spec.dataset], spec.dataset, plan, source_items)
    runs = [
        (plan.recipe(spec.model, pattern, seed, part.n_nominal), part.training)
        for part in (fit.parts(fit.pool) if fit is not None else [])
        for pattern in spec.patterns
        for seed in spec.seeds
    ]
    _training_cost(out, runs, settings)
    return out


def _training_cost(out: CandidateScores, runs: list, settings: LmSettings) -> None:
    """The cost of the candidate's fold models (recipe, training items): epochs, training examples seen
    (epochs x texts) and logged training seconds, each the mean per fold model."""
    seconds = []
    for recipe, training in runs:
        log = run_folder(recipe, training, settings.run) / "training.json"
        if log.is_file():
            seconds.append(json.loads(log.read_text(encoding="utf-8"))["seconds"])
    if runs:
        out.epochs = runs[0][0].epochs
        out.train_examples = float(np.mean([r.epochs * len(t.labels) * len(r.patterns) for r, t in runs]))
    out.train_seconds = float(np.mean(seconds)) if seconds else float("nan")


def _student_scores(
    spec: VerifierSpec,
    scheme: str,
    judged: pd.DataFrame,
    needed: pd.DataFrame,
    settings: LmSettings,
    *,
    train: bool,
    reverse: bool,
) -> CandidateScores:
    """A student's out-of-fold scores: each fold model is the student of the teacher's model of that fold
    (lm.verifier.fold_verifier), trained one after the other (LM_THREADS threads)."""
    out = CandidateScores(spec, scheme, judged, {})
    totals = {(seed, back): pd.Series(0.0, index=judged.index) for seed in spec.seeds for back in (0, 1)}
    count = pd.Series(0, index=judged.index)
    runs = []
    for dataset, group in judged.groupby("dataset", sort=True):
        fit = cross_fit(group, str(dataset), settings.plan, needed)
        for part in fit.parts(group) if fit is not None else []:
            scored = group.loc[part.index]
            pairs = [(scored["premise_text"], scored["hypothesis_text"])]
            pairs += [(scored["hypothesis_text"], scored["premise_text"])] if reverse else []
            for seed in spec.seeds:
                student = replace(spec, seeds=(seed,), cosine_share=0.0)
                verifier = fold_verifier(
                    student, part.training, part.n_nominal, settings=settings.run, allow_compute=train
                )
                for back, (premises, hypotheses) in enumerate(pairs):
                    totals[seed, back][part.index] += score_pairs(
                        verifier, list(premises), list(hypotheses), settings=settings.run, allow_compute=train
                    )
                if dataset == spec.dataset:
                    runs += verifier.runs()
            count[part.index] += 1
    scored = count > 0
    for seed in spec.seeds:
        out.forward[seed] = (totals[seed, 0] / count).where(scored)
        if reverse:
            out.reverse[seed] = (totals[seed, 1] / count).where(scored)
    _training_cost(out, runs, settings)
    return out


def _metrics(labels: np.ndarray, scores: np.ndarray, folds: np.ndarray) -> dict:
    inside = folds >= 0
    y, s, f = labels[inside], scores[inside], folds[inside]
    pred = metrics.cross_fitted_predictions(y, s, f)
    p, r, f1 = metrics.precision_recall_f1(y, pred)
    return {
        "n_items": int(inside.sum()),
        "n_cut": int((~inside).sum()),
        "precision": p,
        "recall": r,
        "f1": f1,
        "auc_pr50": metrics.auc_pr_above(y, s),
        "auc_norm": metrics.auc_normalized(y, s),
        "roc_auc": metrics.roc_auc(y, s),
    }


def honest_rows(scores: CandidateScores, variants: tuple[Variant, ...] = (Variant(),)) -> list[dict]:
    """Rows per judged dataset, variant and seed (and the seed ensemble, "mean"), with the profile of the
    judged items' folds."""
    spec, judged = scores.spec, scores.judged
    plan = candidate_plan(spec, sorted({str(d) for d in judged["dataset"]}), scores.scheme)
    rows = []
    for dataset, group in judged.groupby("dataset", sort=True):
        fit = cross_fit(group, str(dataset), plan, judged)
        if fit is None:
            continue
        folds = fit.fold_of(group).to_numpy()
        profile = fit.profile(group)
        labels = group["label"].to_numpy(bool)
        cosine = scores.cosine.loc[group.index] if scores.cosine is not None else None
        for variant in variants:
            if (variant.cosine and cosine is None) or (variant.reverse and not scores.reverse):
                continue
            per_seed = {
                str(seed): variant.apply(
                    s.loc[group.index],
                    scores.reverse[seed].loc[group.index] if variant.reverse else None,
                    cosine,
                )
                for seed, s in scores.forward.items()
            }
            if len(per_seed) > 1:
                per_seed["mean"] = pd.concat(per_seed.values(), axis=1).mean(axis=1)
            cost = (scores.epochs, scores.train_examples, scores.train_seconds)
            if variant.cosine == 1:  # the zero-shot cosine alone: nothing trained
                cost = (0, 0.0, 0.0)
            for seed, s in per_seed.items():
                if s.isna().any():
                    continue
                rows.append(
                    {
                        "candidate": candidate_name(spec),
                        "variant": variant.name,
                        "protocol": SPLITS[scores.scheme],
                        "dataset": dataset,
                        "seed": seed,
                        **_metrics(labels, s.to_numpy(float), folds),
                        "pair": profile.pair,
                        "both": profile.both,
                        "any": profile.any,
                        "epochs": cost[0],
                        "train_examples": cost[1],
                        "train_seconds": cost[2],
                    }
                )
    return rows


def _old_split(group: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """(training items, reported items) of the protocol used before: SherLIiC lm_split train -> lm_dev,
    Levy/Holt (and subsets) train -> dev."""
    dataset = str(group["dataset"].iloc[0])
    if dataset == "sherliic":
        dev = group[group["split"] == "dev"]
        lm = dev["extra"].map(lambda e: (e or {}).get("lm_split") if isinstance(e, dict) else None)
        return dev[lm == "train"], dev[lm == "dev"]
    if dataset.startswith("levy_holt"):
        return group[group["split"] == "train"], group[group["split"] == "dev"]
    return None


def old_split_rows(spec: VerifierSpec, items: pd.DataFrame, settings: LmSettings) -> list[dict]:
    """The candidate under the old protocol (no extra data, no cross-fit): the leaky figures, for
    comparison. Threshold tuned on the training items, scored by the model that saw them."""
    group = items[items["dataset"] == spec.dataset]
    split = _old_split(group) if len(group) else None
    if split is None:
        return []
    train, reported = split
    training = TrainingSet(
        train["premise_text"].astype(str).tolist(),
        train["hypothesis_text"].astype(str).tolist(),
        train["label"].astype(bool).tolist(),
        f"{spec.dataset} old split train ({len(train)} items)",
    )
    plan = spec.plan()
    both = pd.concat([train, reported])
    per_seed = {}
    for seed in spec.seeds:
        runs = [
            run_scores(
                plan.recipe(spec.model, pattern, seed, len(train)),
                training,
                both["premise_text"].astype(str).tolist(),
                both["hypothesis_text"].astype(str).tolist(),
                allow_compute=True,
                settings=settings.run,
                label=f"old split {spec.model} '{pattern}' {spec.dataset} seed {seed}",
            )
            for pattern in spec.patterns
        ]
        per_seed[str(seed)] = np.mean(runs, axis=0)
    if len(per_seed) > 1:
        per_seed["mean"] = np.mean(list(per_seed.values()), axis=0)
    rows = []
    y_train, y = train["label"].to_numpy(bool), reported["label"].to_numpy(bool)
    for seed, s in per_seed.items():
        s_train, s_rep = s[: len(train)], s[len(train) :]
        threshold = metrics.best_f1_threshold(y_train, s_train)
        p, r, f1 = metrics.precision_recall_f1(y, s_rep >= threshold)
        rows.append(
            {
                "candidate": candidate_name(spec),
                "variant": Variant().name,
                "protocol": "old split",
                "dataset": spec.dataset,
                "seed": seed,
                "n_items": len(reported),
                "n_cut": 0,
                "precision": p,
                "recall": r,
                "f1": f1,
                "auc_pr50": metrics.auc_pr_above(y, s_rep),
                "auc_norm": metrics.auc_normalized(y, s_rep),
                "roc_auc": metrics.roc_auc(y, s_rep),
            }
        )
    return rows


def merge(new: pd.DataFrame, old: pd.DataFrame | None) -> pd.DataFrame:
    """The old rows with those of the new rows' (candidate, variant, protocol, dataset, seed) replaced."""
    new = new.reindex(columns=SELECTION_COLUMNS)
    if old is None or old.empty:
        return new
    key = ["candidate", "variant", "protocol", "dataset", "seed"]
    old = old.reindex(columns=SELECTION_COLUMNS).astype({"seed": str})
    new = new.astype({"seed": str})
    replaced = set(map(tuple, new[key].to_numpy().tolist()))
    keep = [tuple(k) not in replaced for k in old[key].to_numpy().tolist()]
    return pd.concat([old[keep], new], ignore_index=True)[SELECTION_COLUMNS]


def cv_evaluation(baselines: list[Baseline], items: pd.DataFrame, ctx: Context) -> Evaluation:
    """The fold rows of `make lm` (split tm_cv or pd_cv, the scheme of the method's plan; beside the
    harness's dev / lm_dev / test rows): each method's scores of the labelled pool items inside a fold,
    cross-fitted thresholds (RESULT_COLUMNS; threshold NaN, as each fold has its own). A fine-tuned
    method's pool scores are out of fold (lm.methods), a zero-shot one's need no training; the
    folds are those of the dataset's cross-fit under the method's plan (a Levy/Holt subset: its Levy/Holt
    items' folds)."""
    out = Evaluation()
    settings = lm_settings(ctx)
    for bl in baselines:
        method = bl.name.split(" seed ")[0]
        for dataset, group in items.groupby("dataset", sort=True):
            pool = group[pool_mask(group)]
            if pool.empty:
                continue
            plan = settings.plan_for(method, str(dataset))
            fit = cross_fit(pool, str(dataset), plan, other_items(pool, ctx, plan))
            if fit is None:
                continue
            try:
                raw = bl.score(pool, ctx).reindex(pool.index)
            except ResourceMissing as exc:
                out.skipped[bl.name] = str(exc)
                continue
            folds = fit.fold_of(pool).to_numpy()
            covered = raw.notna().to_numpy()
            inside = (folds >= 0) & covered
            if not inside.any():
                continue
            labels = pool["label"].to_numpy(bool)[inside]
            scores = raw.to_numpy(float)[inside]
            pred = metrics.cross_fitted_predictions(labels, scores, folds[inside])
            p, r, f1 = metrics.precision_recall_f1(labels, pred)
            split = SPLITS[plan.fold_scheme]
            out.rows.append(
                {
                    "method": bl.name,
                    "dataset": dataset,
                    "split": split,
                    "threshold": float("nan"),
                    "precision": p,
                    "recall": r,
                    "f1": f1,
                    "auc_pr50": metrics.auc_pr_above(labels, scores),
                    "auc_norm": metrics.auc_normalized(labels, scores),
                    "roc_auc": metrics.roc_auc(labels, scores),
                    "n_items": int((folds >= 0).sum()),
                    "n_covered": int(inside.sum()),
                }
            )
            out.curves[(bl.name, str(dataset), split)] = (labels, scores)
    return out
