"""Writing results: out/baselines.csv (exact columns), out/baselines.md (laid out like the paper's
Table 3, with the published numbers alongside) and PR-curve PNGs under out/plots/."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from baselines import metrics
from baselines.evaluate import RESULT_COLUMNS, Evaluation

# Paper Table 3 (docs/design.md §9): SherLIiC test P / R / F1 in %.
PUBLISHED_TEST = {
    "Lemma": (90.7, 8.9, 16.1),
    "Always yes": (33.3, 100.0, 49.9),
    "Berant I": (76.2, 12.6, 21.6),
    "Berant II": (77.4, 18.6, 30.0),
    "PPDB": (62.1, 24.0, 34.7),
    "All Rules": (40.4, 49.3, 44.4),
    "ESIM": (39.0, 83.3, 53.1),
    "word2vec": (52.0, 60.6, 55.9),
    "typed_rel_emb": (53.2, 48.6, 50.8),
    "untyped_rel_emb": (49.9, 67.2, 57.2),
    "w2v+typed_rel": (52.3, 68.8, 59.4),
    "w2v+untyped_rel": (52.8, 69.5, 60.0),
    "w2v+tsg_rel_emb": (51.8, 72.7, 60.5),
    "WeedsPrec (untyped)": (38.6, 78.3, 51.7),
    "invCL (untyped)": (35.7, 86.3, 50.5),
    "Sherlock+ESR": (49.1, 52.6, 50.8),
}
# Published SherLIiC dev rows we pin in tests (issue 4): P / R / F1 in %.
PUBLISHED_DEV = {
    "Always yes": (33.2, 100.0, 49.9),
    "Lemma": (90.0, 10.9, 19.4),
    "Berant I": (69.9, 15.4, 25.2),
}
# Methods whose name here differs from the paper's.
PAPER_NAME = {"word2vec (GloVe 6B 50d substitute)": "word2vec"}
NOTES = {
    "Berant II": "global TNCF λ=0.1 rule file (unscored), not the paper's local scored file",
    "PPDB": "crude substitute: Lemma with PPDB-XL lexical paraphrases",
    "word2vec (GloVe 6B 50d substitute)": "GloVe 6B 50d instead of GoogleNews word2vec 300d",
}


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame[RESULT_COLUMNS].to_csv(path, index=False, float_format="%.6g")
    return path


def _pct(v: float) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}"


def _prf(frame: pd.DataFrame, method: str, dataset: str, split: str) -> tuple[str, str, str]:
    row = frame[(frame.method == method) & (frame.dataset == dataset) & (frame.split == split)]
    if row.empty:
        return "", "", ""
    r = row.iloc[0]
    return _pct(r.precision), _pct(r.recall), _pct(r.f1)


def _pub(table: dict, method: str) -> tuple[str, str, str]:
    v = table.get(PAPER_NAME.get(method, method))
    return ("", "", "") if v is None else tuple(f"{x:.1f}" for x in v)


def markdown(
    frame: pd.DataFrame,
    order: list[str],
    skipped: dict[str, str] | None = None,
    failed: dict[str, str] | None = None,
    coverage: pd.DataFrame | None = None,
) -> str:
    """Table 3 layout for SherLIiC plus one metrics table per other dataset/split."""
    methods = [m for m in order if m in set(frame.method)] + sorted(set(frame.method) - set(order))
    lines = [
        "# Baselines",
        "",
        "## SherLIiC (paper Table 3 layout; P / R / F1 in %)",
        "",
        "dev = full SherLIiC-dev (996 items, threshold tuned on dev); lm_dev = lm_split dev items "
        "(threshold tuned on lm_split train); test only when a test file was given. "
        "Published numbers: Schmitt & Schütze (2019), Table 3.",
        "",
        "| Method | dev P | dev R | dev F1 | lm_dev P | lm_dev R | lm_dev F1 | test P | test R | test F1 "
        "| published dev P/R/F1 | published test P/R/F1 | note |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for m in methods:
        cells = [
            *_prf(frame, m, "sherliic", "dev"),
            *_prf(frame, m, "sherliic", "lm_dev"),
            *_prf(frame, m, "sherliic", "test"),
        ]
        pub_dev, pub_test = "/".join(_pub(PUBLISHED_DEV, m)), "/".join(_pub(PUBLISHED_TEST, m))
        lines.append(
            f"| {m} | " + " | ".join(cells) + f" | {pub_dev.strip('/')} | {pub_test.strip('/')} "
            f"| {NOTES.get(m, '')} |"
        )
    others = frame[frame.dataset != "sherliic"]
    for (dataset, split), g in others.groupby(["dataset", "split"], sort=True):
        lines += [
            "",
            f"## {dataset} — {split}",
            "",
            "| Method | thr | P | R | F1 | AUC(p≥.5) | AUC norm | ROC AUC | covered |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        g = g.set_index("method")
        for m in [x for x in methods if x in g.index]:
            r = g.loc[m]
            thr = "" if math.isnan(r.threshold) else f"{r.threshold:.3g}"
            lines.append(
                f"| {m} | {thr} | {_pct(r.precision)} | {_pct(r.recall)} | {_pct(r.f1)} | {r.auc_pr50:.3f} "
                f"| {r.auc_norm:.3f} | {'' if math.isnan(r.roc_auc) else f'{r.roc_auc:.3f}'} "
                f"| {r.n_covered}/{r.n_items} |"
            )
    if coverage is not None and not coverage.empty:
        lines += [
            "",
            "## Coverage of the benchmark items",
            "",
            "Items whose premise and hypothesis map to dependency paths, and whose two canonical paths "
            "are relations of warehouse.relations (empty: warehouse not built).",
            "",
            "| dataset | split | items | with paths | in warehouse |",
            "|---|---|---:|---:|---:|",
        ]
        for r in coverage.itertuples():
            wh = (
                ""
                if r.n_in_warehouse is None or r.n_in_warehouse != r.n_in_warehouse
                else int(r.n_in_warehouse)
            )
            lines.append(f"| {r.dataset} | {r.split} | {r.n_items} | {r.n_with_paths} | {wh} |")
    if skipped:
        lines += ["", "## Skipped baselines", ""]
        lines += [f"- {m}: {why}" for m, why in sorted(skipped.items())]
    if failed:
        lines += ["", "## Failed baselines (errors)", ""]
        lines += [f"- {m}: {why}" for m, why in sorted(failed.items())]
    lines += [
        "",
        "Reference: Entailment graphs, AUC (precision > 0.5): SherLIiC test BInc .170, Hosseini 2018 "
        ".184; Levy/Holt test BInc .262, Hosseini 2018 .271. Zeichner et al. (2012) area under the "
        "recall-precision curve: DIRT .40, Cover .43, BInc .44, Berant et al. .52.",
        "",
    ]
    return "\n".join(lines)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


def plot_curves(evaluation: Evaluation, out_dir: Path) -> list[Path]:
    """One PNG per dataset/split with the PR curves of every method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    groups: dict[tuple[str, str], list[tuple[str, np.ndarray, np.ndarray]]] = {}
    for (method, dataset, split), (labels, scores) in evaluation.curves.items():
        groups.setdefault((dataset, split), []).append((method, labels, scores))
    written = []
    for (dataset, split), curves in sorted(groups.items()):
        fig, ax = plt.subplots(figsize=(7, 5))
        for method, labels, scores in curves:
            c = metrics.pr_curve(labels, scores)
            if len(c.recall) <= 2:  # a yes/no baseline: its operating point (the "yes" group)
                ax.plot(c.recall[:1], c.precision[:1], "o", label=method, markersize=5)
            else:
                ax.plot(c.recall, c.precision, "-", label=method)
        if curves:
            xi = float(np.mean(curves[0][1])) if len(curves[0][1]) else 0.0
            ax.axhline(xi, color="grey", linestyle=":", linewidth=1, label=f"positive rate {xi:.2f}")
        ax.set_xlabel("recall")
        ax.set_ylabel("precision")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{dataset} — {split}")
        ax.legend(fontsize=6, loc="upper right")
        path = out_dir / f"pr_{_slug(dataset)}_{_slug(split)}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written
