"""Running baselines on benchmark items: the paper's "on top of Lemma" combination, dev-tuned thresholds
and the result rows of out/baselines.csv / results.baseline_scores, which name the build whose marts they
read (BUILD_COLUMNS: results of two builds never share one report).

Evaluation plans (which split tunes the threshold, which is evaluated):
- SherLIiC:   split `dev`     = full dev, threshold tuned on full dev (the paper's dev row);
              split `lm_dev`  = lm_split dev items, threshold tuned on the lm_split train items;
              split `test`    = test file (if loaded), threshold tuned on full dev.
- Levy/Holt (and each directional subset): `dev` tuned on `train`; `test` (if loaded) tuned on train+dev
              (= the full Hosseini et al. dev split).
- Zeichner:   `all`, threshold tuned on the same items (the published number is an AUC; the F1 is an
              oracle-threshold figure).
Non-tunable baselines are threshold-free: yes iff score >= 0.5 on their 0/1 scores (threshold column
empty). Uncovered items (NaN score) get the minimum score of their split (a non-tunable: 0).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from builds.records import BuildMismatch, BuildRef, build_ref
from evaluation import metrics
from evaluation.registry import Baseline, Context, ResourceMissing, get
from warehouse.target import Target
from warehouse.terminal import Progress

RESULT_COLUMNS = [
    "method",
    "dataset",
    "split",
    "threshold",
    "precision",
    "recall",
    "f1",
    "auc_pr50",
    "auc_norm",
    "roc_auc",
    "n_items",
    "n_covered",
]
# which build the scores read (builds.records.BuildRef): first in out/baselines.csv and the results table
BUILD_COLUMNS = ["build", "build_id"]
CSV_COLUMNS = [*BUILD_COLUMNS, *RESULT_COLUMNS]


@dataclass
class Evaluation:
    """Result rows plus the scores behind them (for PR-curve plots)."""

    rows: list[dict] = field(default_factory=list)
    curves: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # method -> reason (resource missing)
    failed: dict[str, str] = field(default_factory=dict)  # method -> error (a bug or bad input)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=RESULT_COLUMNS)

    def extend(self, other: Evaluation) -> None:
        self.rows.extend(other.rows)
        self.curves.update(other.curves)
        self.skipped.update(other.skipped)
        self.failed.update(other.failed)


def fill_uncovered(scores: pd.Series, tunable: bool = True) -> pd.Series:
    """NaN -> the minimum finite score of the set (0 when nothing is covered); a non-tunable: 0 (no)."""
    if not tunable:
        return scores.fillna(0.0)
    finite = scores.dropna()
    return scores.fillna(float(finite.min()) if len(finite) else 0.0)


def run_on_top_of_lemma(scores: pd.Series, lemma_yes: pd.Series, tunable: bool) -> pd.Series:
    """The paper's combination over one evaluated set (dev file, test file, ...).

    Non-tunable: yes if Lemma says yes (max of the 0/1 scores). Tunable: Lemma-positive items get the
    maximum score of the set, so every threshold keeps them positive.
    """
    scores = fill_uncovered(scores, tunable)
    yes = lemma_yes.fillna(False).astype(bool)
    if tunable:
        return scores.where(~yes, float(scores.max()) if len(scores) else 0.0)
    return scores.where(~yes, np.maximum(scores, 1.0))


def _plans(items: pd.DataFrame) -> list[tuple[str, pd.Index, pd.Index | None]]:
    """(reported split, evaluated index, tuning index or None = itself) for one dataset's items."""
    dataset = items["dataset"].iloc[0]
    by_split = {s: g.index for s, g in items.groupby("split")}
    plans: list[tuple[str, pd.Index, pd.Index | None]] = []
    if dataset == "sherliic":
        if "dev" in by_split:
            dev = by_split["dev"]
            plans.append(("dev", dev, None))
            lm = items.loc[dev, "extra"].map(lambda e: (e or {}).get("lm_split"))
            if (lm == "train").any() and (lm == "dev").any():
                plans.append(("lm_dev", lm.index[lm == "dev"], lm.index[lm == "train"]))
            if "test" in by_split:
                plans.append(("test", by_split["test"], dev))
        elif "test" in by_split:
            plans.append(("test", by_split["test"], None))
        return plans
    if "train" in by_split and ("dev" in by_split or "test" in by_split):
        if "dev" in by_split:
            plans.append(("dev", by_split["dev"], by_split["train"]))
        if "test" in by_split:
            tune = by_split["train"].append(by_split["dev"]) if "dev" in by_split else by_split["train"]
            plans.append(("test", by_split["test"], tune))
        return plans
    return [(s, idx, None) for s, idx in sorted(by_split.items())]


def _row(method, dataset, split, threshold, labels, combined, raw) -> dict:
    pred = combined >= (0.5 if threshold is None else threshold)
    p, r, f1 = metrics.precision_recall_f1(labels, pred)
    n_items, n_covered = metrics.coverage(raw)
    return {
        "method": method,
        "dataset": dataset,
        "split": split,
        "threshold": float("nan") if threshold is None else threshold,
        "precision": p,
        "recall": r,
        "f1": f1,
        "auc_pr50": metrics.auc_pr_above(labels, combined),
        "auc_norm": metrics.auc_normalized(labels, combined),
        "roc_auc": metrics.roc_auc(labels, combined),
        "n_items": n_items,
        "n_covered": n_covered,
    }


def evaluate_baseline(
    baseline: Baseline | str, items: pd.DataFrame, ctx: Context, *, on_top_of_lemma: bool | None = None
) -> Evaluation:
    """Score every dataset of `items` with one baseline and evaluate it by the plans above.

    Raises evaluation.registry.ResourceMissing when the baseline's resource is absent.
    """
    bl = get(baseline) if isinstance(baseline, str) else baseline
    use_lemma = bl.on_top_of_lemma if on_top_of_lemma is None else on_top_of_lemma
    out = Evaluation()
    # One row per item: a (dataset, split, item id) given twice would count twice in every metric.
    items = items.drop_duplicates(["dataset", "split", "item_id"], keep="last")
    for dataset, group in items.groupby("dataset", sort=True):
        raw = bl.score(group, ctx).reindex(group.index)
        lemma_yes = get("Lemma").score(group, ctx).reindex(group.index) == 1.0 if use_lemma else None
        for split, eval_idx, tune_idx in _plans(group):
            labels = group.loc[eval_idx, "label"].to_numpy(bool)

            def combined(
                idx: pd.Index, raw: pd.Series = raw, lemma_yes: pd.Series | None = lemma_yes
            ) -> np.ndarray:
                s = raw.loc[idx]
                if use_lemma:
                    return run_on_top_of_lemma(s, lemma_yes.loc[idx], bl.tunable).to_numpy(float)
                return fill_uncovered(s, bl.tunable).to_numpy(float)

            scores = combined(eval_idx)
            threshold = None
            if bl.tunable:
                tune = eval_idx if tune_idx is None else tune_idx
                threshold = metrics.best_f1_threshold(group.loc[tune, "label"].to_numpy(bool), combined(tune))
            out.rows.append(_row(bl.name, dataset, split, threshold, labels, scores, raw.loc[eval_idx]))
            out.curves[(bl.name, dataset, split)] = (labels, scores)
    return out


def evaluate_many(
    names: Iterable[str],
    items: pd.DataFrame,
    ctx: Context,
    *,
    show_progress: bool = True,
    on_top_of_lemma: bool | None = None,
) -> Evaluation:
    """Evaluate several baselines; those whose resources are missing are skipped with the reason, those
    raising another error are recorded in `failed` (the CLI reports them and exits non-zero)."""
    out = Evaluation()
    names = list(names)
    bar = Progress(names, unit="baseline", disable=not show_progress)  # in a log: a line per baseline
    for i, name in enumerate(bar, 1):
        bar.set_description(f"baseline {i}/{len(names)} {name}")
        try:
            out.extend(evaluate_baseline(name, items, ctx, on_top_of_lemma=on_top_of_lemma))
        except ResourceMissing as exc:
            out.skipped[name] = str(exc)
        except Exception as exc:  # one broken baseline must not lose the other rows; reported as failed
            out.failed[name] = f"{type(exc).__name__}: {exc}".strip()
    return out


def with_build(frame: pd.DataFrame, build: BuildRef) -> pd.DataFrame:
    """`frame`'s result rows with the build columns first (CSV_COLUMNS)."""
    return with_build_columns(frame[RESULT_COLUMNS], build)


def with_build_columns(frame: pd.DataFrame, build: BuildRef) -> pd.DataFrame:
    """A copy of `frame` with the build columns (build, build_id) first."""
    framed = frame.copy()
    framed.insert(0, "build_id", pd.array([build.build_id] * len(framed), dtype="Int64"))
    framed.insert(0, "build", build.name)
    return framed


def builds_of(frame: pd.DataFrame) -> list[BuildRef]:
    """The builds of result rows (CSV_COLUMNS, e.g. out/baselines.csv read back)."""
    if "build" not in frame.columns:
        raise BuildMismatch(
            "the results have no build column (written before results named their build): rerun every "
            "method (sherliic-baselines all) or write elsewhere (--out)"
        )
    ids = frame["build_id"] if "build_id" in frame.columns else pd.Series([None] * len(frame))
    pairs = {(str(name), None if pd.isna(i) else int(i)) for name, i in zip(frame["build"], ids, strict=True)}
    return [BuildRef(name, build_id) for name, build_id in sorted(pairs, key=str)]


def store_results(target: Target, frame: pd.DataFrame, build: BuildRef | None = None) -> int:
    """Write rows to results.baseline_scores (on the Target's Postgres side, either engine), replacing
    rows of the same build/method/dataset/split: one delete and one COPY in one transaction. `build`:
    the build the scores read (default: the Target's live build)."""
    build = build if build is not None else build_ref(target)
    target = target.on_postgres()
    target.ensure_schema()
    rows = frame[RESULT_COLUMNS].astype(object).where(frame[RESULT_COLUMNS].notna(), None)
    with target.connect() as conn:
        conn.execute(
            "delete from results.baseline_scores where build = %s and (method, dataset, split) in "
            "(select * from unnest(%s::text[], %s::text[], %s::text[]))",
            (build.name, list(frame.method), list(frame.dataset), list(frame.split)),
        )
        with conn.cursor().copy(
            f"copy results.baseline_scores ({', '.join(CSV_COLUMNS)}) from stdin"
        ) as copy:
            for row in rows.itertuples(index=False):
                values = [v.item() if hasattr(v, "item") else v for v in row]
                copy.write_row([build.name, build.build_id, *values])
    return len(frame)
