"""Honest selection: every candidate configuration judged on predicate-disjoint folds of the labelled pools.

A candidate is a VerifierSpec (model, patterns, training data, directional loss, epochs, seeds). For each
seed, its cross-fit (lm.crossfit) scores every pool item out of fold: the model that scores an
item never trained on an item sharing one of its predicates. The figures (split `pd_cv`) are computed on
the items inside a fold (the cut ones are left out):
  - P/R/F1 with cross-fitted thresholds (fold f judged by the F1-optimal threshold of the other folds,
    evaluation.metrics.cross_fitted_predictions), so no threshold sees the items it judges;
  - AUC(p≥.5), AUC_norm and ROC AUC of the pooled out-of-fold scores.
A Levy/Holt candidate is also judged on every directional subset it serves (the subsets are re-splits of
Levy/Holt's own train+dev items; each subset item keeps the fold of its Levy/Holt item). Per seed rows,
then mean ± sd over seeds, and the seed ensemble (mean probability over seeds, `seed` = "mean").

`old_split_rows` reproduces the protocol used before (train on SherLIiC lm_split=train / Levy/Holt train,
report lm_dev / dev, threshold tuned on the training items the model saw) for the same candidate: the
figures the honest ones are set beside in docs/lm.md.

`python -m lm.cli select` runs one candidate and merges its rows into out/lm/selection.csv and
out/lm/selection.md.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from evaluation import metrics
from evaluation.datasets.folds import pool_mask
from evaluation.evaluate import Evaluation
from evaluation.registry import Baseline, Context, ResourceMissing
from lm.jobs import fill_cache, planned_jobs
from lm.methods import ALLOW_COMPUTE, ITEMS, cross_fit, lm_settings, other_items, seed_scores
from lm.plan import LmSettings, Plan
from lm.runs import TrainingSet, run_scores
from lm.verifier import VerifierSpec

PD_CV = "pd_cv"  # the split of the honest rows: labelled pool items inside a fold, out-of-fold scores
METRICS = ["precision", "recall", "f1", "auc_pr50", "auc_norm", "roc_auc"]
SELECTION_COLUMNS = ["candidate", "protocol", "dataset", "seed", "n_items", "n_cut", *METRICS]


def candidate_name(spec: VerifierSpec) -> str:
    """e.g. `minilm [x, which means that y] sherliic+levy_holt direction 0.5 epochs 2`."""
    data = "+".join((spec.dataset, *spec.extra))
    extras = (f" direction {spec.direction:g}" if spec.direction else "") + (
        f" epochs {spec.epochs}" if spec.epochs else ""
    )
    return f"{spec.model} [{'; '.join(spec.patterns)}] {data}{extras}"


def served(spec: VerifierSpec, loaded: list[str]) -> list[str]:
    """The datasets a candidate is judged on: its own, and for Levy/Holt every loaded subset."""
    if spec.dataset == "levy_holt":
        return ["levy_holt", *sorted(d for d in loaded if d.startswith("levy_holt/"))]
    return [spec.dataset]


def candidate_plan(spec: VerifierSpec, evaluated: list[str]) -> Plan:
    """The plan that fine-tunes the candidate on its dataset and scores the datasets it serves with it."""
    others = [d for d in evaluated if d != spec.dataset]
    return replace(
        spec.plan(),
        finetune={spec.model: tuple(evaluated)},
        all_patterns=tuple(evaluated),
        score_with=tuple((d, (spec.dataset,)) for d in others),
    )


def _pool_items(items: pd.DataFrame, datasets: set[str]) -> pd.DataFrame:
    """The labelled pools of these datasets: selection never reads a test file."""
    return items[items["dataset"].isin(datasets) & pool_mask(items)]


def honest_scores(
    spec: VerifierSpec, items: pd.DataFrame, settings: LmSettings, *, workers: int = 1, train: bool = True
) -> tuple[pd.DataFrame, dict[int, pd.Series]]:
    """(the judged pool items, seed -> out-of-fold score of each: mean over the candidate's patterns)."""
    evaluated = served(spec, sorted({str(d) for d in items["dataset"]}))
    plan = candidate_plan(spec, evaluated)
    needed = _pool_items(items, {*evaluated, *spec.extra})
    judged = needed[needed["dataset"].isin(evaluated)]
    settings = replace(settings, plan=plan, models=(spec.model,))
    if train:  # the candidate's own dataset only: the served subsets reuse its runs (their pairs are its)
        source_items = needed[needed["dataset"].isin({spec.dataset, *spec.extra})]
        jobs = [
            j
            for j in planned_jobs(source_items, [spec.model], plan, zero_shot=False)
            if j.dataset == spec.dataset
        ]
        fill_cache(source_items, jobs, settings, workers)
    ctx = Context(lm=settings)
    ctx.cache[ALLOW_COMPUTE] = train
    ctx.cache[ITEMS] = needed
    scores = {}
    for seed in spec.seeds:
        runs = [seed_scores(judged, spec.model, p, seed, ctx, plan) for p in spec.patterns]
        scores[seed] = pd.concat(runs, axis=1).mean(axis=1, skipna=False)
    return judged, scores


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


def honest_rows(spec: VerifierSpec, judged: pd.DataFrame, scores: dict[int, pd.Series]) -> list[dict]:
    """pd_cv rows: per seed and for the seed ensemble ("mean"), per judged dataset."""
    plan = candidate_plan(spec, sorted({str(d) for d in judged["dataset"]}))
    rows = []
    for dataset, group in judged.groupby("dataset", sort=True):
        fit = cross_fit(group, str(dataset), plan, judged)
        folds = fit.fold_of(group).to_numpy() if fit is not None else np.full(len(group), -1)
        labels = group["label"].to_numpy(bool)
        variants = [(str(seed), s.loc[group.index]) for seed, s in scores.items()]
        if len(scores) > 1:
            variants.append(("mean", pd.concat(scores.values(), axis=1).loc[group.index].mean(axis=1)))
        for seed, s in variants:
            if s.isna().any():
                continue
            row = {"candidate": candidate_name(spec), "protocol": "pd_cv", "dataset": dataset, "seed": seed}
            rows.append(row | _metrics(labels, s.to_numpy(float), folds))
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


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean ± sd over the seeds (seed ensemble apart) per candidate, protocol and dataset."""
    per_seed = frame[frame["seed"].astype(str) != "mean"]
    grouped = per_seed.groupby(["candidate", "protocol", "dataset"], sort=False)
    out = grouped[METRICS].agg(["mean", "std"])
    out.columns = [f"{m}_{stat}" for m, stat in out.columns]
    out["n_seeds"] = grouped.size()
    out["n_items"] = grouped["n_items"].first()
    ensemble = frame[frame["seed"].astype(str) == "mean"].set_index(["candidate", "protocol", "dataset"])
    for m in METRICS:
        out[f"{m}_ensemble"] = ensemble[m].reindex(out.index)
    return out.reset_index()


def markdown(frame: pd.DataFrame) -> str:
    """out/lm/selection.md: one table per dataset, candidates by decreasing headline figure."""

    def pm(r: pd.Series, m: str, scale: float, digits: int) -> str:
        sd = r[f"{m}_std"]
        text = f"{scale * r[f'{m}_mean']:.{digits}f}" + ("" if sd != sd else f" ± {scale * sd:.{digits}f}")
        ens = r[f"{m}_ensemble"]
        return text + ("" if ens != ens else f" ({scale * ens:.{digits}f})")

    lines = [
        "# LM candidates on predicate-disjoint folds (honest selection)",
        "",
        "`pd_cv`: out-of-fold scores of the labelled pool (SherLIiC dev; Levy/Holt train+dev, each",
        "subset its items of it), items cut between folds left out; F1 with cross-fitted thresholds.",
        "`old split`: the protocol used before (lm_dev / dev, threshold tuned on the training items the",
        "model saw). Mean ± sd over seeds, the seed ensemble in parentheses. P/R/F1 in %.",
        "",
    ]
    table = summary(frame)
    for dataset, group in table.groupby("dataset", sort=True):
        key = (
            "f1_mean"
            if dataset == "sherliic"
            else "auc_norm_mean"
            if "/" in str(dataset)
            else "auc_pr50_mean"
        )
        group = group.sort_values(["protocol", key], ascending=[False, False])
        lines += [
            f"## {dataset}",
            "",
            "| candidate | protocol | items | seeds | P | R | F1 | AUC(p≥.5) | AUC_norm | ROC AUC |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for _, r in group.iterrows():
            lines.append(
                f"| {r['candidate']} | {r['protocol']} | {int(r['n_items'])} | {int(r['n_seeds'])} "
                f"| {pm(r, 'precision', 100, 1)} | {pm(r, 'recall', 100, 1)} | {pm(r, 'f1', 100, 1)} "
                f"| {pm(r, 'auc_pr50', 1, 3)} | {pm(r, 'auc_norm', 1, 3)} | {pm(r, 'roc_auc', 1, 3)} |"
            )
        lines.append("")
    return "\n".join(lines)


def merge(new: pd.DataFrame, old: pd.DataFrame | None) -> pd.DataFrame:
    """The old rows with those of the new rows' (candidate, protocol, dataset, seed) replaced."""
    if old is None or old.empty:
        return new[SELECTION_COLUMNS]
    key = ["candidate", "protocol", "dataset", "seed"]
    old = old.astype({"seed": str})
    new = new.astype({"seed": str})
    replaced = set(map(tuple, new[key].to_numpy().tolist()))
    keep = [tuple(k) not in replaced for k in old[key].to_numpy().tolist()]
    return pd.concat([old[keep], new], ignore_index=True)[SELECTION_COLUMNS]


def pd_cv_evaluation(baselines: list[Baseline], items: pd.DataFrame, ctx: Context) -> Evaluation:
    """The `pd_cv` rows of `make lm` (beside the harness's dev / lm_dev / test rows): each method's scores
    of the labelled pool items inside a fold, cross-fitted thresholds (RESULT_COLUMNS; threshold NaN, as
    each fold has its own). A fine-tuned method's pool scores are out of fold (lm.methods), a
    zero-shot one's need no training; the folds are those of the dataset's cross-fit under the method's
    plan (a Levy/Holt subset: its Levy/Holt items' folds)."""
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
            out.rows.append(
                {
                    "method": bl.name,
                    "dataset": dataset,
                    "split": PD_CV,
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
            out.curves[(bl.name, str(dataset), PD_CV)] = (labels, scores)
    return out
