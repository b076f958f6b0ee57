"""Writing results: out/baselines.csv (exact columns, the build first), out/baselines.md (laid out like the
paper's Table 3, with the published numbers alongside, coverage on every row and the data the scores came
from, the build first) and PR-curve PNGs under out/plots/<family>/. A report shows the results of one
build: rows of two builds are refused (builds.records.BuildMismatch).

A row whose method covers less than MIN_COVERAGE of the evaluated items shows "—  (covers k/N)" instead
of its metrics, and its curve is left out of the plots: most of its items carry the fallback score
(docs/design.md §8), so its numbers would describe the fallback, not the method.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from builds.records import BuildMismatch, BuildRef
from evaluation import metrics
from evaluation.catalog import family
from evaluation.evaluate import CSV_COLUMNS, Evaluation, builds_of, with_build
from evaluation.registry import is_composite
from warehouse.target import Marts, Target, marts_of

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


# The mark of a composite row (evaluation.registry.Baseline.composite) and the legend every report gives it.
COMPOSITE_MARK = "†"
COMPOSITE_LEGEND = (
    f"{COMPOSITE_MARK} composite: combines other methods' scores (an ensemble, a mix, the learned "
    "combination); the paper has no such row to compare it with."
)


def shown_name(method: str) -> str:
    """The method as the reports show it: composite rows marked."""
    return f"{method} {COMPOSITE_MARK}" if is_composite(method) else method


# Share of the evaluated items a method must score for its metrics to be shown (docs/design.md §8).
MIN_COVERAGE = 0.5


def write_csv(frame: pd.DataFrame, path: Path, build: BuildRef | None = None) -> Path:
    """out/baselines.csv: CSV_COLUMNS. `frame` without build columns gets those of `build` (default: the
    default build, no record); with them, they must name one build."""
    if "build" not in frame.columns:
        frame = with_build(frame, build if build is not None else BuildRef())
    one_build(frame)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame[CSV_COLUMNS].to_csv(path, index=False, float_format="%.6g")
    return path


def one_build(frame: pd.DataFrame) -> BuildRef | None:
    """The one build of result rows (None: rows without build columns); BuildMismatch for two."""
    if "build" not in frame.columns or frame.empty:
        return None
    found = builds_of(frame)
    if len(found) > 1:
        raise BuildMismatch(
            f"results of builds {', '.join(b.label for b in found)} in one report: one report shows one build"
        )
    return found[0]


def covered_enough(n_covered: int, n_items: int) -> bool:
    """Whether a method scores at least MIN_COVERAGE of the evaluated items (an item is covered when the
    method gives it a score; evaluation.metrics.coverage)."""
    return n_items > 0 and n_covered >= MIN_COVERAGE * n_items


def _pct(v: float) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}"


def _num(v: float, fmt: str) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def _uncovered(row) -> str:
    return f"—  (covers {int(row.n_covered)}/{int(row.n_items)})"


def _pub(table: dict, method: str) -> str:
    v = table.get(PAPER_NAME.get(method, method))
    return "" if v is None else "/".join(f"{x:.1f}" for x in v)


def _table(rows: list[dict], right: set[str] = frozenset()) -> str:
    """A Markdown table (pandas + tabulate); columns named in `right` are right-aligned."""
    frame = pd.DataFrame(rows)
    align = ["right" if c in right else "left" for c in frame.columns]
    return frame.to_markdown(index=False, colalign=align, disable_numparse=True)


def sherliic_table(frame: pd.DataFrame, methods: list[str]) -> str:
    """Paper Table 3 layout: per split P/R/F1 (in %) and coverage, the published rows alongside."""
    sher = frame[frame.dataset == "sherliic"].set_index(["method", "split"])
    splits = [s for s in ("dev", "lm_dev", "test") if s in set(sher.index.get_level_values("split"))]
    rows = []
    for m in methods:
        cells: dict[str, str] = {"Method": shown_name(m)}
        for split in splits:
            prf, cov = f"{split} P/R/F1", f"{split} covered"
            if (m, split) not in sher.index:
                cells[prf] = cells[cov] = ""
                continue
            r = sher.loc[(m, split)]
            cells[prf] = (
                " / ".join(_pct(v) for v in (r.precision, r.recall, r.f1))
                if covered_enough(r.n_covered, r.n_items)
                else _uncovered(r)
            )
            cells[cov] = f"{int(r.n_covered)}/{int(r.n_items)}"
        cells["published dev P/R/F1"] = _pub(PUBLISHED_DEV, m)
        cells["published test P/R/F1"] = _pub(PUBLISHED_TEST, m)
        cells["note"] = NOTES.get(m, "")
        rows.append(cells)
    return _table(rows, right={c for c in rows[0] if "covered" in c}) if rows else ""


def split_table(group: pd.DataFrame, methods: list[str]) -> str:
    """One dataset/split: threshold, P/R/F1 (in %), the areas, ROC AUC and coverage per method."""
    g = group.set_index("method")
    rows = []
    for m in [x for x in methods if x in g.index]:
        r = g.loc[m]
        cells = {"Method": shown_name(m), "thr": "", "P": "", "R": "", "F1": "", "AUC(p≥.5)": ""}
        cells["AUC norm"] = ""
        cells["ROC AUC"] = ""
        if covered_enough(r.n_covered, r.n_items):
            cells.update(
                {
                    "thr": _num(r.threshold, ".3g"),
                    "P": _pct(r.precision),
                    "R": _pct(r.recall),
                    "F1": _pct(r.f1),
                    "AUC(p≥.5)": _num(r.auc_pr50, ".3f"),
                    "AUC norm": _num(r.auc_norm, ".3f"),
                    "ROC AUC": _num(r.roc_auc, ".3f"),
                }
            )
        else:
            cells["thr"] = _uncovered(r)
        cells["covered"] = f"{int(r.n_covered)}/{int(r.n_items)}"
        rows.append(cells)
    numeric = {"P", "R", "F1", "AUC(p≥.5)", "AUC norm", "ROC AUC", "covered"}
    return _table(rows, right=numeric)


def markdown(
    frame: pd.DataFrame,
    order: list[str],
    skipped: dict[str, str] | None = None,
    failed: dict[str, str] | None = None,
    coverage: pd.DataFrame | None = None,
    sources: list[str] | None = None,
) -> str:
    """Table 3 layout for SherLIiC plus one metrics table per other dataset/split. `sources`: the lines of
    report.data_sources (the graph and the benchmark files the scores came from). Rows with build columns
    must name one build, which the report names first."""
    build = one_build(frame)
    methods = [m for m in order if m in set(frame.method)] + sorted(set(frame.method) - set(order))
    lines = ["# Baselines", ""]
    if build is not None:
        lines += [f"Build: {build.label} (`sherliic-dbt builds` shows its provenance).", ""]
    if sources:
        lines += ["## Data", "", *sources, ""]
    lines += [
        "## SherLIiC (paper Table 3 layout; P / R / F1 in %)",
        "",
        "dev = full SherLIiC-dev (threshold tuned on dev); lm_dev = lm_split dev items "
        "(threshold tuned on lm_split train); test only when a test file was given. covered = items the "
        f"method scores / items; under {MIN_COVERAGE:.0%} the metrics are not shown (—): they would "
        "describe the fallback score of the uncovered items (docs/design.md §8). "
        "Published numbers: Schmitt & Schütze (2019), Table 3.",
        "",
        COMPOSITE_LEGEND,
        "",
        sherliic_table(frame, methods),
    ]
    others = frame[frame.dataset != "sherliic"]
    for (dataset, split), g in others.groupby(["dataset", "split"], sort=True):
        lines += ["", f"## {dataset} — {split}", "", split_table(g, methods)]
    if coverage is not None and not coverage.empty:
        cov = coverage.rename(
            columns={"n_items": "items", "n_with_paths": "with paths", "n_in_warehouse": "in warehouse"}
        )[["dataset", "split", "items", "with paths", "in warehouse"]]
        cov["in warehouse"] = cov["in warehouse"].map(lambda v: "" if v is None or v != v else str(int(v)))
        cov = cov.astype(str)
        lines += [
            "",
            "## Coverage of the benchmark items",
            "",
            "Items whose premise and hypothesis map to dependency paths, and whose two canonical paths "
            "are relations of the build's relations mart (empty: not built).",
            "",
            _table(cov.to_dict("records"), right={"items", "with paths", "in warehouse"}),
        ]
    if skipped:
        lines += ["", "## Skipped baselines", ""]
        lines += [f"- {line}" for line in skipped_lines(skipped)]
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


def compact_table(frame: pd.DataFrame, order: list[str]) -> str:
    """One line per method with the key figures, for the console: F1 (in %) on each SherLIiC split,
    AUC(p≥.5) on each other dataset's split (the directional Levy/Holt subsets and every other metric are
    in out/baselines.md and .csv); "—" where the method covers too few items; composite rows marked."""
    methods = [m for m in order if m in set(frame.method)] + sorted(set(frame.method) - set(order))
    top = frame[~frame.dataset.str.contains("/", regex=False)]
    columns = sorted(
        {(r.dataset, r.split) for r in top.itertuples()}, key=lambda k: (k[0] != "sherliic", k[0], k[1])
    )
    by_key = top.set_index(["method", "dataset", "split"])
    rows = []
    for m in methods:
        cells = {"method": shown_name(m)}
        for dataset, split in columns:
            header = f"{dataset} {split} " + ("F1" if dataset == "sherliic" else "AUC")
            if (m, dataset, split) not in by_key.index:
                cells[header] = ""
                continue
            r = by_key.loc[(m, dataset, split)]
            if not covered_enough(r.n_covered, r.n_items):
                cells[header] = "—"
            else:
                cells[header] = _pct(r.f1) if dataset == "sherliic" else _num(r.auc_pr50, ".3f")
        rows.append(cells)
    if not rows:
        return ""
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in rows[0]}
    # the method left-aligned, the figures right-aligned under their headers
    lines = [
        "  ".join(c.ljust(w) if c == "method" else c.rjust(w) for c, w in widths.items()).rstrip(),
        *(
            "  ".join(r[c].ljust(w) if c == "method" else r[c].rjust(w) for c, w in widths.items()).rstrip()
            for r in rows
        ),
    ]
    legend = [COMPOSITE_LEGEND] if any(is_composite(m) for m in methods) else []
    return "\n".join([*lines, *legend])


# --- where the scores came from ------------------------------------------------------------------------


# The demo's corpus name (demo/job.py DEMO_CORPUS): a graph of it alone shares almost no relation with the
# benchmarks, and a report of it says where the real corpora come from.
DEMO_CORPUS = "demo"
REAL_CORPUS_HINT = (
    "built from the demo's synthetic corpus alone, which shares almost no relation with the benchmarks, "
    "so the warehouse-backed rows show — (too few items covered); for them load the real corpora "
    "(`make extract-real`) and build a graph of them (`make dbt-run VARS='{r_min: 2, min_relv: 10, "
    'min_sigma: 1}\'`, README "Extraction")'
)


def graph_corpora(warehouse: Target | Marts) -> list[str] | None:
    """The corpora the build's graph was made of (the `teg_corpora` mart), None when it is not built or
    does not record them."""
    with marts_of(warehouse) as marts:
        if not marts.has_table(marts.schema, "teg_corpora"):
            return None
        return [r[0] for r in marts.rows(f"select corpus_name from {marts.schema}.teg_corpora order by 1")]


def real_corpus_hint(corpora: list[str] | None) -> str | None:
    """What to do when the graph is the demo's alone (REAL_CORPUS_HINT), else None."""
    return REAL_CORPUS_HINT if corpora and set(corpora) <= {DEMO_CORPUS} else None


def skipped_lines(skipped: dict[str, str]) -> list[str]:
    """The skipped methods, one line per reason (a missing extra skips a dozen methods for the same
    reason): ``lm:a, lm:b (2): torch is not installed; …``, every name in full."""
    by_reason: dict[str, list[str]] = {}
    for name, why in sorted(skipped.items()):
        by_reason.setdefault(why, []).append(name)
    return [
        f"{', '.join(names)}{f' ({len(names)})' if len(names) > 1 else ''}: {why}"
        for why, names in by_reason.items()
    ]


def graph_source(warehouse: Target | Marts) -> str:
    """One line naming the graph behind the warehouse-backed scores, from the `teg_corpora` mart of
    `warehouse` (a Target's marts, or open marts of either engine)."""
    backed = "The warehouse-backed scores (graph family, relation embeddings)"
    with marts_of(warehouse) as marts:
        schema = marts.schema
        if not marts.has_table(schema, "relations"):
            return (
                f"{backed} have no graph: no TEG is built in schema {schema} (they are skipped or uncovered)."
            )
        n_relations = marts.one(f"select count(*) from {schema}.relations")[0]
        if not marts.has_table(schema, "teg_corpora"):
            return (
                f"{backed} come from the TEG in schema {schema} ({n_relations:,} relations); its corpora "
                "are not recorded (built before the teg_corpora mart existed: rebuild with `make dbt-run`)."
            )
        names = [r[0] for r in marts.rows(f"select corpus_name from {schema}.teg_corpora order by 1")]
    built_from = ", ".join(names) if names else "no corpus"
    graph = f"the TEG in schema {schema} ({n_relations:,} relations)"
    hint = real_corpus_hint(names)
    return f"{backed} come from {graph}, built from: {built_from}." + (f" It is {hint}." if hint else "")


def benchmark_sources(target: Target, datasets: list[str]) -> pd.DataFrame:
    """The loaded benchmark files behind the evaluated items (the latest batch of every item, as
    evaluation.datasets.load_items reads them, on the Target's Postgres side): columns file, dataset,
    split, items."""
    query = """
        select source_file, dataset, split, count(*) from (
            select distinct on (i.dataset, i.split, i.item_id) i.dataset, i.split, b.source_file
            from raw.benchmark_items as i
            inner join raw.load_batches as b using (batch_id)
            where b.status = 'loaded' and i.dataset = any(%s)
            order by i.dataset, i.split, i.item_id, i.batch_id desc
        ) as latest
        group by source_file, dataset, split
        order by dataset, split, source_file
    """
    with target.on_postgres().connect() as conn:
        rows = conn.execute(query, (list(datasets),)).fetchall()
    return pd.DataFrame(rows, columns=["file", "dataset", "split", "items"])


def data_sources(
    target: Target,
    datasets: list[str],
    shared: Path | None = None,
    warehouse: Target | Marts | None = None,
) -> list[str]:
    """The report's "Data" section: the graph line (the marts of `warehouse`, default the Target's) and
    the benchmark files (the Target's Postgres side; paths relative to `shared`)."""
    files = benchmark_sources(target, datasets)
    # loaded files are recorded by their resolved path: the folder is compared resolved too (a symbolic
    # link, a relative SHERLIIC_DATA)
    root = shared.resolve() if shared is not None else None

    def shown(path: str) -> str:
        if root is not None and Path(path).is_relative_to(root):
            return str(Path(path).relative_to(root))
        return path

    files["file"] = files["file"].map(shown)
    files["items"] = files["items"].map(str)
    lines = [graph_source(warehouse if warehouse is not None else target), ""]
    relative = any(not Path(f).is_absolute() for f in files["file"])
    where = f" (paths under the shared data folder {shared} are relative to it)" if relative else ""
    lines += [f"Benchmark files{where}:", "", _table(files.to_dict("records"), right={"items"})]
    return lines


# --- PR plots ------------------------------------------------------------------------------------------

_COLOURS = [f"C{i}" for i in range(10)]  # matplotlib's tab10 cycle
_STYLES = ["-", "--", "-.", ":"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


@dataclass
class Figure:
    """One PR plot: a method family on one dataset/split; `left_out` names the methods not drawn."""

    family: str
    dataset: str
    split: str
    drawn: list[tuple[str, np.ndarray, np.ndarray]]  # (legend label, labels, scores)
    left_out: list[str]  # "method (covered/items)"

    @property
    def path(self) -> Path:
        return Path(self.family) / f"pr_{_slug(self.dataset)}_{_slug(self.split)}.png"


def plot_plan(evaluation: Evaluation) -> list[Figure]:
    """The figures plot_curves draws: per family and dataset/split, the methods covering at least
    MIN_COVERAGE of the items (methods with identical scores as one curve, labelled "A = B"); a family
    with none of them on a split gets no figure."""
    coverage = {
        (r["method"], r["dataset"], r["split"]): (r["n_covered"], r["n_items"]) for r in evaluation.rows
    }
    groups: dict[tuple[str, str, str], list[tuple[str, np.ndarray, np.ndarray]]] = {}
    for (method, dataset, split), (labels, scores) in evaluation.curves.items():
        groups.setdefault((family(method), dataset, split), []).append((method, labels, scores))
    figures = []
    for (fam, dataset, split), curves in sorted(groups.items()):
        drawn, left_out = [], []
        for method, labels, scores in curves:
            n_covered, n_items = coverage[(method, dataset, split)]
            if not covered_enough(n_covered, n_items):
                left_out.append(f"{method} ({n_covered}/{n_items})")
                continue
            # a method scoring exactly like one already drawn shares its curve and legend entry (e.g.
            # w2v+typed_rel = word2vec where no relation vector exists): drawn twice, one would hide the other
            twin = next((i for i, d in enumerate(drawn) if np.array_equal(d[2], scores)), None)
            if twin is None:
                drawn.append((method, labels, scores))
            else:
                name, twin_labels, twin_scores = drawn[twin]
                drawn[twin] = (f"{name} = {method}", twin_labels, twin_scores)
        if drawn:
            figures.append(Figure(fam, dataset, split, drawn, left_out))
    return figures


# Who owns which figures under out/plots/ (plot_curves' `owner`): `make lm` (lm/cli.py) draws
# the lm family into out/plots/lm/; `sherliic-baselines all` draws every other family and owns the rest of
# out/plots/ (older versions wrote pr_*.png at its top level). An owner removes the PNGs in its folders
# that it did not write this run, so figures of earlier runs under other names cannot linger. Without an
# owner (`sherliic-baselines one`) every family in the evaluation is drawn and nothing is removed.
LM_FAMILY = "lm"
PlotOwner = Literal["baselines", "lm"]


def owned_plots(out_dir: Path, owner: PlotOwner) -> list[Path]:
    """The PNGs under out_dir that belong to `owner` (see LM_FAMILY)."""
    if owner == "lm":
        return sorted((out_dir / LM_FAMILY).glob("*.png"))
    return sorted(p for p in out_dir.rglob("*.png") if p.relative_to(out_dir).parts[0] != LM_FAMILY)


def plot_curves(evaluation: Evaluation, out_dir: Path, owner: PlotOwner | None = None) -> list[Path]:
    """The PNGs of plot_plan, out_dir/<family>/pr_<dataset>_<split>.png: the anchored PR curve
    (evaluation.metrics) of every drawn method in its own colour and line style, yes/no methods as their
    operating point, the legend outside the axes, the methods left out named in a note under them.
    With an `owner`, only its families are drawn and its other PNGs under out_dir are removed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = plot_plan(evaluation)
    if owner is not None:
        figures = [f for f in figures if (f.family == LM_FAMILY) == (owner == "lm")]
    written = []
    for figure in figures:
        fig, ax = plt.subplots(figsize=(9, 5))
        for i, (method, labels, scores) in enumerate(figure.drawn):
            colour = _COLOURS[i % len(_COLOURS)]
            recall, precision = metrics.anchored_pr_curve(labels, scores)
            if len(recall) <= 3:  # a yes/no method: its operating point (the "yes" group)
                marker = _MARKERS[i % len(_MARKERS)]
                ax.plot(recall[1:2], precision[1:2], marker, color=colour, label=method, markersize=7)
            else:
                style = _STYLES[i % len(_STYLES)]
                ax.plot(recall, precision, style, color=colour, label=method, linewidth=1.6)
        labels = figure.drawn[0][1]
        xi = float(np.mean(labels)) if len(labels) else 0.0
        ax.axhline(xi, color="grey", linestyle=":", linewidth=1, label=f"positive rate {xi:.2f}")
        ax.set_xlabel("recall")
        ax.set_ylabel("precision")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{figure.dataset} — {figure.split}: {figure.family}")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9, frameon=False)
        if figure.left_out:
            note = f"Not drawn, covering under {MIN_COVERAGE:.0%} of the items: " + "; ".join(figure.left_out)
            fig.text(0.01, -0.02, note, fontsize=8, wrap=True, va="top")
        path = out_dir / figure.path
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    if owner is not None:
        for stale in set(owned_plots(out_dir, owner)) - set(written):
            stale.unlink()
    return written
