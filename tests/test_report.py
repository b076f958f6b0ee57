"""The baseline report (evaluation/report.py): coverage on every row, "—  (covers k/N)" under the
threshold, where the scores came from, and one PR plot per method family without the uncovered methods."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluation import datasets, report
from evaluation.evaluate import RESULT_COLUMNS, Evaluation

FIX = Path(__file__).parent / "fixtures" / "benchmarks"


def _row(method: str, dataset: str, split: str, n_covered: int, n_items: int, **metrics) -> dict:
    base = dict.fromkeys(RESULT_COLUMNS, float("nan"))
    base |= {"precision": 0.5, "recall": 0.25, "f1": 1 / 3, "auc_pr50": 0.125, "auc_norm": 0.0625}
    return (
        base
        | {"method": method, "dataset": dataset, "split": split}
        | metrics
        | {
            "n_covered": n_covered,
            "n_items": n_items,
        }
    )


def _cells(md: str, method: str, after: str = "") -> list[str]:
    """The cells of `method`'s row in the first table after the line starting with `after`."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after)) if after else 0
    row = next(line for line in lines[start:] if line.startswith(f"| {method} "))
    return [c.strip() for c in row.strip("|").split("|")]


def test_rows_show_coverage_and_hide_metrics_under_the_threshold():
    frame = pd.DataFrame(
        [
            _row("Lemma", "sherliic", "dev", 996, 996),
            _row("Sherlock+ESR", "sherliic", "dev", 2, 996),
            _row("Sherlock+ESR", "sherliic", "lm_dev", 100, 200),  # exactly 50 %: shown
            _row("word2vec (GloVe 6B 50d substitute)", "levy_holt", "dev", 10, 1098, threshold=0.3),
            _row("Lemma", "levy_holt", "dev", 1098, 1098, roc_auc=0.75),
        ]
    )
    md = report.markdown(frame, ["Lemma", "Sherlock+ESR", "word2vec (GloVe 6B 50d substitute)"])
    assert report.MIN_COVERAGE == 0.5
    header = _cells(md, "Method")
    assert header[:5] == ["Method", "dev P/R/F1", "dev covered", "lm_dev P/R/F1", "lm_dev covered"]
    assert "test P/R/F1" not in header  # no test rows: no empty test columns
    assert _cells(md, "Lemma")[1:5] == ["50.0 / 25.0 / 33.3", "996/996", "", ""]
    sherlock = _cells(md, "Sherlock+ESR")
    assert sherlock[1:5] == ["—  (covers 2/996)", "2/996", "50.0 / 25.0 / 33.3", "100/200"]
    assert sherlock[5:7] == ["", "49.1/52.6/50.8"]  # the published test row stays for comparison
    levy = "## levy_holt — dev"
    assert _cells(md, "Method", levy)[-1] == "covered"
    assert _cells(md, "Lemma", levy)[1:] == [
        "",
        "50.0",
        "25.0",
        "33.3",
        "0.125",
        "0.062",
        "0.750",
        "1098/1098",
    ]
    w2v = _cells(md, "word2vec (GloVe 6B 50d substitute)", levy)
    assert w2v[1:] == ["—  (covers 10/1098)", "", "", "", "", "", "", "10/1098"]


def test_graph_source_with_and_without_the_mart(fresh_target):
    assert "no TEG is built" in report.graph_source(fresh_target)
    with fresh_target.connect() as conn:
        # stand-ins for the dbt marts (tests/test_dbt_build.py builds the real ones): only their presence
        # and corpus_name matter here
        conn.execute("create schema warehouse")
        conn.execute("create table warehouse.relations as select 'nsubj^-___x___dobj' as path")
    line = report.graph_source(fresh_target)
    assert "(1 relations); its corpora are not recorded (built before the teg_corpora mart" in line
    with fresh_target.connect() as conn:
        conn.execute("create table warehouse.teg_corpora (corpus_name text)")
        conn.execute("insert into warehouse.teg_corpora values ('trex'), ('fewrel')")
    assert report.graph_source(fresh_target).endswith("(1 relations), built from: fewrel, trex.")


def test_data_sources_name_the_benchmark_files(fresh_target):
    datasets.load_benchmark(
        fresh_target, FIX / "sherliic_dev_sample.tsv", "sherliic_tsv", show_progress=False
    )
    files = report.benchmark_sources(fresh_target, ["sherliic"])
    assert files.to_dict("records") == [
        {"file": str(FIX / "sherliic_dev_sample.tsv"), "dataset": "sherliic", "split": "dev", "items": 3}
    ]
    lines = report.data_sources(fresh_target, ["sherliic"], shared=FIX.parent)
    assert lines[0].startswith("The warehouse-backed scores") and "no TEG is built" in lines[0]
    table = "\n".join(lines)
    assert "benchmarks/sherliic_dev_sample.tsv" in table and str(FIX) not in table
    assert report.markdown(pd.DataFrame(columns=RESULT_COLUMNS), [], sources=lines).count("## Data") == 1


def _evaluation() -> Evaluation:
    labels = np.array([True, False, True, False])
    ev = Evaluation()
    for method, n_covered, scores in [
        ("Lemma", 4, [1.0, 0.0, 0.0, 0.0]),
        ("Berant I", 4, [1.0, 0.0, 1.0, 0.0]),
        ("word2vec (GloVe 6B 50d substitute)", 3, [0.9, 0.2, 0.6, 0.4]),
        ("w2v+typed_rel", 3, [0.9, 0.2, 0.6, 0.4]),  # identical scores: one curve, one legend entry
        ("typed_rel_emb", 1, [0.9, 0.1, 0.1, 0.1]),  # covers 1 of 4: left out of the vectors figure
        ("Sherlock+ESR", 0, [0.0, 0.0, 0.0, 0.0]),  # the graph family has nothing to draw: no figure
    ]:
        ev.rows.append(_row(method, "sherliic", "dev", n_covered, 4))
        ev.curves[(method, "sherliic", "dev")] = (labels, np.asarray(scores))
    return ev


def test_plots_one_figure_per_family_without_uncovered_methods(tmp_path):
    ev = _evaluation()
    plan = {f.path.as_posix(): f for f in report.plot_plan(ev)}
    assert set(plan) == {"rules/pr_sherliic_dev.png", "vectors/pr_sherliic_dev.png"}
    assert [m for m, _, _ in plan["rules/pr_sherliic_dev.png"].drawn] == ["Lemma", "Berant I"]
    vectors = plan["vectors/pr_sherliic_dev.png"]
    assert [m for m, _, _ in vectors.drawn] == ["word2vec (GloVe 6B 50d substitute) = w2v+typed_rel"]
    assert vectors.left_out == ["typed_rel_emb (1/4)"]
    written = report.plot_curves(ev, tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == sorted(plan)
    assert all(p.stat().st_size > 1000 for p in written)
    assert not (tmp_path / "graph").exists()


def _lm_evaluation(splits: list[tuple[str, str]]) -> Evaluation:
    """Lemma, word2vec and an LM method (families rules, vectors, lm) on each (dataset, split)."""
    labels = np.array([True, False, True, False])
    ev = Evaluation()
    for dataset, split in splits:
        for method, scores in [
            ("Lemma", [1.0, 0.0, 0.0, 0.0]),
            ("word2vec (GloVe 6B 50d substitute)", [0.9, 0.2, 0.6, 0.4]),
            ("lm:minilm zero-shot cosine", [0.8, 0.3, 0.7, 0.1]),
        ]:
            ev.rows.append(_row(method, dataset, split, 4, 4))
            ev.curves[(method, dataset, split)] = (labels, np.asarray(scores))
    return ev


def _pngs(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*.png")}


def test_plot_owners_remove_only_their_own_stale_figures(tmp_path):
    """`sherliic-baselines all` (owner "baselines") owns out/plots/ but lm/, `make lm` (owner "lm") owns
    lm/: each draws its families and removes the PNGs in its folders it did not write this run."""
    both = _lm_evaluation([("sherliic", "dev"), ("levy_holt", "test")])
    assert {p.relative_to(tmp_path).as_posix() for p in report.plot_curves(both, tmp_path, owner="lm")} == {
        "lm/pr_sherliic_dev.png",
        "lm/pr_levy_holt_test.png",
    }
    lm_figure = (tmp_path / "lm" / "pr_sherliic_dev.png").read_bytes()
    report.plot_curves(both, tmp_path, owner="baselines")
    assert _pngs(tmp_path) == {
        f"{family}/pr_{name}.png"
        for family in ("rules", "vectors", "lm")
        for name in ("sherliic_dev", "levy_holt_test")
    }
    # a figure of the old layout (out/plots/pr_*.png) and a notes file that is no figure
    shutil.copy(tmp_path / "rules" / "pr_sherliic_dev.png", tmp_path / "pr_sherliic_dev.png")
    (tmp_path / "rules" / "notes.txt").write_text("kept")

    dev = _lm_evaluation([("sherliic", "dev")])
    written = report.plot_curves(dev, tmp_path, owner="baselines")
    assert {p.relative_to(tmp_path).as_posix() for p in written} == {
        "rules/pr_sherliic_dev.png",
        "vectors/pr_sherliic_dev.png",
    }
    assert _pngs(tmp_path) == {
        "rules/pr_sherliic_dev.png",
        "vectors/pr_sherliic_dev.png",
        "lm/pr_sherliic_dev.png",
        "lm/pr_levy_holt_test.png",  # the lm family is make lm's: kept, untouched
    }
    assert (tmp_path / "lm" / "pr_sherliic_dev.png").read_bytes() == lm_figure
    assert (tmp_path / "rules" / "notes.txt").read_text() == "kept"

    report.plot_curves(dev, tmp_path, owner="lm")
    assert _pngs(tmp_path) == {
        "rules/pr_sherliic_dev.png",
        "vectors/pr_sherliic_dev.png",
        "lm/pr_sherliic_dev.png",
    }

    # no owner (`sherliic-baselines one`): draws the evaluation's families, removes nothing
    lemma_only = Evaluation(
        rows=dev.rows[:1], curves={k: v for k, v in dev.curves.items() if k[0] == "Lemma"}
    )
    (tmp_path / "rules" / "pr_zeichner_test.png").write_bytes(lm_figure)
    assert report.plot_curves(lemma_only, tmp_path) == [tmp_path / "rules" / "pr_sherliic_dev.png"]
    assert "rules/pr_zeichner_test.png" in _pngs(tmp_path)


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("Lemma", "rules"),
        ("All Rules", "rules"),
        ("word2vec (GloVe 6B 50d substitute)", "vectors"),
        ("w2v+tsg_rel_emb", "vectors"),
        ("BInc (typed)", "graph"),
        ("Sherlock+ESR", "graph"),
        ("learned combination", "combination"),
        ("lm:minilm zero-shot cosine", "lm"),
        ("not registered", "other"),
    ],
)
def test_families(name, family):
    from evaluation.catalog import family as family_of

    assert family_of(name) == family


def test_the_path_claim_holds_when_the_shared_folder_is_a_link(fresh_target, tmp_path):
    """Loaded files are recorded by their resolved path: a shared folder named through a symbolic link
    (or a relative SHERLIIC_DATA) still shows them relative to it, and the claim is made only then."""
    linked = tmp_path / "data"
    linked.symlink_to(FIX.parent, target_is_directory=True)
    datasets.load_benchmark(fresh_target, linked / "benchmarks" / "sherliic_dev_sample.tsv", "sherliic_tsv")
    lines = report.data_sources(fresh_target, ["sherliic"], shared=linked)
    table = "\n".join(lines)
    assert f"Benchmark files (paths under the shared data folder {linked} are relative to it):" in table
    assert "| benchmarks/sherliic_dev_sample.tsv " in table and str(FIX) not in table
    elsewhere = report.data_sources(fresh_target, ["sherliic"], shared=tmp_path / "elsewhere")
    assert "Benchmark files:" in elsewhere and "relative" not in "\n".join(elsewhere)


def test_a_demo_only_graph_points_to_the_real_corpora(fresh_target):
    with fresh_target.connect() as conn:
        conn.execute("create schema warehouse")
        conn.execute("create table warehouse.relations as select 'nsubj^-___x___dobj' as path")
        conn.execute("create table warehouse.teg_corpora (corpus_name text)")
        conn.execute("insert into warehouse.teg_corpora values ('demo')")
    line = report.graph_source(fresh_target)
    assert "built from: demo. It is built from the demo's synthetic corpus alone" in line
    assert "(`make extract-real`)" in line
    assert report.real_corpus_hint(report.graph_corpora(fresh_target)) == report.REAL_CORPUS_HINT
    with fresh_target.connect() as conn:
        conn.execute("insert into warehouse.teg_corpora values ('trex')")
    assert "make extract-real" not in report.graph_source(fresh_target)
    assert report.real_corpus_hint(report.graph_corpora(fresh_target)) is None


def test_methods_skipped_for_one_reason_are_one_line():
    torch = "torch is not installed; the LM baselines need the [lm] extra: pip install -e '.[lm]'"
    skipped = {f"lm:minilm pattern {i}": torch for i in range(12)} | {"PPDB": "no rule file"}
    lines = report.skipped_lines(skipped)
    assert len(lines) == 2 and lines[0] == "PPDB: no rule file"
    assert lines[1] == ", ".join(sorted(n for n in skipped if n.startswith("lm:"))) + f" (12): {torch}"
    md = report.markdown(pd.DataFrame(columns=RESULT_COLUMNS), [], skipped=skipped)
    assert md.count(torch) == 1
