"""The selection's report: out/lm/selection.md (one table per benchmark, the folds' overlap profile beside
the figures) and out/lm/selection_cost.png (each candidate's headline figure against its training cost),
both from out/lm/selection.csv (lm.selection)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evaluation.datasets.folds import TEST_PROFILES
from lm.selection import METRICS, SELECTION_COLUMNS

# The headline figure of each benchmark (the held-out test's), and the target it is judged against.
HEADLINE = {
    "sherliic": ("f1", 0.74),
    "levy_holt": ("auc_pr50", 0.81),
    "levy_holt/dirposi_dirnegi": ("auc_norm", 0.47),
}
LABELS = {"f1": "F1", "auc_pr50": "AUC(p≥.5)", "auc_norm": "AUC_norm"}
# Training seconds per example (one pass of one pattern sentence) with one torch thread on the quiet
# 2-core machine (`make bench-lm`, docs/lm.md): the cost axis does not depend on the load of the moment.
QUIET_SECONDS_PER_EXAMPLE = {"minilm": 8.1 / 200, "mpnet": 42.5 / 200}


def quiet_minutes(frame: pd.DataFrame) -> pd.Series:
    """Training cost of one fold model on a quiet machine, one thread (minutes): examples seen x the
    model's seconds per example."""
    model = frame["candidate"].str.split(" ", n=1).str[0]
    return frame["train_examples"] * model.map(QUIET_SECONDS_PER_EXAMPLE) / 60


def headline(dataset: str) -> str:
    if dataset in HEADLINE:
        return HEADLINE[dataset][0]
    return "auc_norm" if "/" in dataset else "auc_pr50"


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean ± sd over the seeds (seed ensemble apart) per candidate, variant, protocol and dataset."""
    frame = frame.reindex(columns=SELECTION_COLUMNS).astype({"seed": str}).fillna({"variant": "fine-tuned"})
    keys = ["candidate", "variant", "protocol", "dataset"]
    per_seed = frame[frame["seed"] != "mean"]
    grouped = per_seed.groupby(keys, sort=False)
    out = grouped[METRICS].agg(["mean", "std"])
    out.columns = [f"{m}_{stat}" for m, stat in out.columns]
    out["n_seeds"] = grouped.size()
    for column in ["n_items", "pair", "both", "any", "epochs", "train_examples", "train_seconds"]:
        out[column] = grouped[column].first()
    ensemble = frame[frame["seed"] == "mean"].set_index(keys)
    for m in METRICS:
        out[f"{m}_ensemble"] = ensemble[m].reindex(out.index)
    out = out.reset_index()
    out["quiet_minutes"] = quiet_minutes(out)
    return out


def _pm(r: pd.Series, m: str, scale: float, digits: int) -> str:
    sd = r[f"{m}_std"]
    text = f"{scale * r[f'{m}_mean']:.{digits}f}" + ("" if sd != sd else f" ± {scale * sd:.{digits}f}")
    ens = r[f"{m}_ensemble"]
    return text + ("" if ens != ens else f" ({scale * ens:.{digits}f})")


def _profile(r: pd.Series) -> str:
    if r["pair"] != r["pair"]:
        return "—"
    return f"{r['pair']:.1f} / {r['both']:.1f} / {r['any']:.1f}"


def _cost(r: pd.Series) -> str:
    if r["epochs"] != r["epochs"]:
        return "—"
    if r["epochs"] == 0:
        return "no training"
    quiet = "" if r["quiet_minutes"] != r["quiet_minutes"] else f", {r['quiet_minutes']:.1f} min quiet"
    logged = "" if r["train_seconds"] != r["train_seconds"] else f", {r['train_seconds']:.0f} s logged"
    return f"{int(r['epochs'])} ep{quiet}{logged}"


def markdown(frame: pd.DataFrame) -> str:
    """out/lm/selection.md: one table per dataset, rows by decreasing headline figure."""
    lines = [
        "# LM candidates on the selection folds",
        "",
        "`tm_cv`: out-of-fold scores of the labelled pool (SherLIiC dev; Levy/Holt train+dev, each subset",
        "its items of it) on folds matched to the test's overlap profile; `pd_cv`: predicate-disjoint folds",
        "(the strict view, cut items left out); `old split`: lm_dev / dev, threshold tuned on the training",
        "items. F1 with cross-fitted thresholds. Mean ± sd over seeds, the seed ensemble in parentheses.",
        "P/R/F1 in %. Profile: the judged items against their fold models' training items, % with the",
        "predicate pair / both predicates / one seen. Cost of one fold model: epochs, minutes on one core of",
        "the quiet machine (examples seen x seconds per example of `make bench-lm`), seconds as logged.",
        "",
        "Test profiles: "
        + "; ".join(f"{name} {profile}" for name, profile in TEST_PROFILES.items())
        + " (pair / both / any).",
        "",
    ]
    table = summary(frame)
    for dataset, group in table.groupby("dataset", sort=True):
        key = f"{headline(str(dataset))}_mean"
        group = group.sort_values(["protocol", key], ascending=[False, False])
        lines += [
            f"## {dataset}",
            "",
            "| candidate | variant | folds | profile | items | seeds | P | R | F1 | AUC(p≥.5) | AUC_norm "
            "| ROC AUC | cost |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for _, r in group.iterrows():
            lines.append(
                f"| {r['candidate']} | {r['variant']} | {r['protocol']} | {_profile(r)} "
                f"| {int(r['n_items'])} | {int(r['n_seeds'])} "
                f"| {_pm(r, 'precision', 100, 1)} | {_pm(r, 'recall', 100, 1)} "
                f"| {_pm(r, 'f1', 100, 1)} | {_pm(r, 'auc_pr50', 1, 3)} | {_pm(r, 'auc_norm', 1, 3)} "
                f"| {_pm(r, 'roc_auc', 1, 3)} | {_cost(r)} |"
            )
        lines.append("")
    return "\n".join(lines)


def plot_cost(frame: pd.DataFrame, path: Path, protocol: str = "tm_cv") -> Path | None:
    """Each benchmark's headline figure (seed mean, per candidate and variant) against the training cost
    of one fold model, with the target as a line: what more training buys on two cores."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = summary(frame)
    table = table[(table["protocol"] == protocol) & table["quiet_minutes"].notna()]
    shown = [d for d in HEADLINE if d in set(table["dataset"])]
    if not shown:
        return None
    fig, axes = plt.subplots(1, len(shown), figsize=(5.5 * len(shown), 4.5), squeeze=False)
    for ax, dataset in zip(axes[0], shown, strict=True):
        metric, target = HEADLINE[dataset]
        rows = table[table["dataset"] == dataset]
        for model, style in (("minilm", ":"), ("mpnet", "-.")):  # zero cost: a line, not a log-axis point
            untrained = rows[(rows["quiet_minutes"] == 0) & rows["candidate"].str.startswith(model)]
            if len(untrained):
                best = untrained[f"{metric}_mean"].max()
                ax.axhline(best, color="tab:green", linestyle=style, label=f"{model} zero-shot cosine")
        rows = rows[rows["quiet_minutes"] > 0]
        for model, marker in (("minilm", "o"), ("mpnet", "s")):
            mine = rows[rows["candidate"].str.startswith(model)]
            probe = mine["candidate"].str.contains("hypothesis only")
            for subset, colour, label in ((mine[~probe], "tab:blue", model), (mine[probe], "tab:grey", "")):
                if len(subset):
                    ax.scatter(
                        subset["quiet_minutes"],
                        subset[f"{metric}_mean"],
                        marker=marker,
                        color=colour,
                        label=label or f"{model} hypothesis-only",
                    )
        ax.axhline(target, color="tab:red", linestyle="--", label=f"target {target:g}")
        ax.set_xscale("log")
        ax.set_xlabel("training minutes of one fold model, one core, quiet machine (log)")
        ax.set_ylabel(f"{LABELS[metric]} ({protocol}, seed mean)")
        ax.set_title(dataset)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
