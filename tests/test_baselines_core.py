"""Evaluation, reports, CLI, word vectors, and the fidelity of Always yes / Lemma / Berant I on the real
SherLIiC dev (the published dev rows of Table 3, reproduced exactly)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from baselines import cli
from baselines.word_vectors import WordVectors, path_cosine
from builds.records import BuildMismatch, BuildRef
from evaluation import catalog, datasets, report
from evaluation.evaluate import (
    CSV_COLUMNS,
    RESULT_COLUMNS,
    evaluate_baseline,
    evaluate_many,
    run_on_top_of_lemma,
    store_results,
)
from evaluation.registry import Baseline, Context

FIX = Path(__file__).parent / "fixtures" / "benchmarks"


def test_on_top_of_lemma_tunable_and_not():
    scores = pd.Series([0.2, np.nan, 0.9, 0.1])
    lemma = pd.Series([False, True, False, False])
    # uncovered -> the minimum (0.1); Lemma-positive -> the set's maximum (0.9)
    assert run_on_top_of_lemma(scores, lemma, tunable=True).tolist() == [0.2, 0.9, 0.9, 0.1]
    flags = pd.Series([0.0, np.nan, 1.0, 0.0])
    lemma = pd.Series([True, False, False, False])
    assert run_on_top_of_lemma(flags, lemma, tunable=False).tolist() == [1.0, 0.0, 1.0, 0.0]


def _fixture_items() -> pd.DataFrame:
    return datasets.items_frame(datasets.read_benchmark(FIX / "sherliic_dev_sample.tsv", "sherliic_tsv"))


def test_tunable_evaluation_plans_and_thresholds():
    items = _fixture_items()  # t0 train yes (Lemma no), t1 dev no, t2 dev yes
    toy = Baseline("toy", lambda df, ctx: pd.Series([0.8, 0.3, 0.5], index=df.index), True, "toy")
    ev = evaluate_baseline(toy, items, Context())
    rows = {r["split"]: r for r in ev.rows}
    assert set(rows) == {"dev", "lm_dev"}
    # full dev: thresholds 0.8 (F1 2/3), 0.5 (F1 1), 0.3 (F1 .8) -> 0.5
    assert rows["dev"]["threshold"] == 0.5 and rows["dev"]["f1"] == 1.0
    # lm_dev is evaluated with the threshold tuned on the single lm train item (0.8): nothing positive
    assert rows["lm_dev"]["threshold"] == 0.8
    assert (rows["lm_dev"]["precision"], rows["lm_dev"]["recall"]) == (0.0, 0.0)
    assert rows["lm_dev"]["n_items"] == 2 and rows["lm_dev"]["roc_auc"] == 1.0


def test_non_tunable_rows_are_threshold_free():
    items = _fixture_items()
    ev = evaluate_many(["Always yes", "Lemma"], items, Context(), show_progress=False)
    frame = ev.frame()
    dev = frame[frame.split == "dev"].set_index("method")
    assert math.isnan(dev.loc["Always yes", "threshold"])
    assert dev.loc["Always yes", ["precision", "recall"]].tolist() == [2 / 3, 1.0]
    assert dev.loc["Lemma", ["precision", "recall", "n_covered"]].tolist() == [0.0, 0.0, 3]


def test_a_failing_baseline_is_recorded_not_fatal():
    from evaluation import registry

    def broken(df, ctx):
        raise ValueError("boom")

    registry.REGISTRY["__broken__"] = Baseline("__broken__", broken, True, "test only")
    try:
        ev = evaluate_many(["__broken__", "Always yes"], _fixture_items(), Context(), show_progress=False)
    finally:
        del registry.REGISTRY["__broken__"]
    assert ev.failed == {"__broken__": "ValueError: boom"}
    assert {r["method"] for r in ev.rows} == {"Always yes"}


def test_store_results_replaces_rows(fresh_target):
    row = dict.fromkeys(RESULT_COLUMNS, 0.5) | {
        "method": "m",
        "dataset": "d",
        "split": "dev",
        "threshold": float("nan"),
        "n_items": 4,
        "n_covered": 3,
    }
    store_results(fresh_target, pd.DataFrame([row]))
    store_results(fresh_target, pd.DataFrame([row | {"f1": 0.75}]))
    store_results(fresh_target, pd.DataFrame([row | {"f1": 0.25}]), BuildRef("trial", 7))  # another build
    with fresh_target.connect() as conn:
        rows = conn.execute(
            "select build, build_id, method, f1, threshold, n_covered from results.baseline_scores "
            "order by build"
        ).fetchall()
    assert rows == [("default", None, "m", 0.75, None, 3), ("trial", 7, "m", 0.25, None, 3)]


def test_report_files(tmp_path):
    items = _fixture_items()
    ev = evaluate_many(["Always yes", "Lemma"], items, Context(), show_progress=False)
    path = report.write_csv(ev.frame(), tmp_path / "baselines.csv")
    assert path.read_text().splitlines()[0] == ",".join(CSV_COLUMNS)
    assert all(line.startswith("default,,") for line in path.read_text().splitlines()[1:])
    coverage = pd.DataFrame(
        [{"dataset": "sherliic", "split": "dev", "n_items": 3, "n_with_paths": 3, "n_in_warehouse": 2}]
    )
    md = report.markdown(
        ev.frame(), catalog.ordered_names(), {"Patty": "resource missing"}, {"X": "ValueError: bug"}, coverage
    )
    assert "- X: ValueError: bug" in md and "- Patty: resource missing" in md
    lines = md.splitlines()
    always_yes = next(line for line in lines if line.startswith("| Always yes"))
    cells = [c.strip() for c in always_yes.strip("|").split("|")]
    # dev P/R/F1, dev covered, lm_dev P/R/F1, lm_dev covered, published dev, published test, note
    assert cells[1:3] == ["66.7 / 100.0 / 80.0", "3/3"] and cells[-3:-1] == [
        "33.2/100.0/49.9",
        "33.3/100.0/49.9",
    ]
    assert any(line.replace(" ", "") == "|sherliic|dev|3|3|2|" for line in lines)
    plots = report.plot_curves(ev, tmp_path / "plots")
    assert {p.relative_to(tmp_path / "plots").as_posix() for p in plots} == {
        "rules/pr_sherliic_dev.png",
        "rules/pr_sherliic_lm_dev.png",
    }
    assert all(p.stat().st_size > 1000 for p in plots)


def test_cli_list_and_one(fresh_target, tmp_path, monkeypatch, capsys):
    assert cli.main(["list"]) == 0
    listed = capsys.readouterr().out
    assert "Berant II" in listed and "word2vec (GloVe 6B 50d substitute)" in listed
    shared = tmp_path / "shared"
    (shared / "sherliic").mkdir(parents=True)
    shutil.copy(FIX / "sherliic_dev_sample.tsv", shared / "sherliic" / "dev.tsv")
    monkeypatch.setenv("DATABASE_URL", fresh_target.url())
    monkeypatch.setenv("SHERLIIC_DATA", str(shared))
    out = tmp_path / "out"
    test_args = ["--sherliic-test", str(FIX / "sherliic_release_dev.csv"), "--relation-index"]
    assert cli.main(["one", "Lemma", "--out", str(out), *test_args, str(FIX / "relation_index.tsv")]) == 0
    assert cli.main(["one", "Always yes", "--out", str(out), "--no-load"]) == 0
    frame = pd.read_csv(out / "baselines.csv")
    assert list(frame.columns) == CSV_COLUMNS
    assert set(frame.build) == {"default"} and frame.build_id.isna().all()  # no warehouse built here
    assert sorted(set(frame.method)) == ["Always yes", "Lemma"]  # `one` merges into the CSV
    assert (out / "baselines.md").is_file() and (out / "plots" / "rules" / "pr_sherliic_dev.png").is_file()
    with fresh_target.connect() as conn:
        n = conn.execute("select count(*) from results.baseline_scores").fetchone()[0]
    assert n == 6  # dev, lm_dev and test (the release-format fixture loaded as SherLIiC test) x 2
    test_row = frame[(frame.method == "Lemma") & (frame.split == "test")].iloc[0]
    # test items: invade=>occupy (yes, Lemma no), trade=>fear (no), capital=>be in (yes): Lemma says no to all
    assert (test_row.n_items, test_row.precision, test_row.recall) == (3, 0.0, 0.0)
    assert cli.main(["one", "no such baseline", "--out", str(out)]) == 2


def test_word_vectors_cosine():
    wv = WordVectors(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), ["lead", "head", "go"])
    # mean("lead", "go") = (1, .5); "head" = (0, 1): cosine .5 / sqrt(1.25)
    assert path_cosine("nsubj^-___lead___prep___go___pobj", "nsubj^-___head___dobj", wv) == pytest.approx(
        0.5 / math.sqrt(1.25)
    )
    assert path_cosine("nsubj^-___Lead___dobj", "nsubj^-___lead___dobj", wv) == pytest.approx(
        1.0
    )  # lowercased
    assert math.isnan(path_cosine("nsubj^-___unknownword___dobj", "nsubj^-___lead___dobj", wv))


def test_glove_package_loads():
    wv = WordVectors.glove_6b_50d()
    assert wv.vectors.shape == (400000, 50)
    assert wv.mean(["king"]) is not None and wv.mean(["qqqxqqq"]) is None


@pytest.fixture(scope="module")
def sherliic_dev(shared_data) -> pd.DataFrame:
    return datasets.items_frame(datasets.read_benchmark(shared_data / "sherliic" / "dev.tsv", "sherliic_tsv"))


def test_sherliic_dev_fidelity(sherliic_dev, shared_data):
    """Issue 4: the published dev rows of Always yes, Lemma and Berant I (on top of Lemma), exactly."""
    assert len(sherliic_dev) == 996
    ctx = Context(shared_data=str(shared_data))
    frame = evaluate_many(["Always yes", "Lemma", "Berant I"], sherliic_dev, ctx, show_progress=False).frame()
    dev = frame[(frame.dataset == "sherliic") & (frame.split == "dev")].set_index("method")
    got = {m: tuple(round(v, 3) for v in dev.loc[m, ["precision", "recall", "f1"]]) for m in dev.index}
    assert got == {
        "Always yes": (0.332, 1.000, 0.499),
        "Lemma": (0.900, 0.109, 0.194),
        "Berant I": (0.699, 0.154, 0.252),
    }
    assert (dev["n_items"] == 996).all()


def test_baselines_doc_quotes_the_current_rows(sherliic_dev, shared_data):
    """docs/baselines.md's SherLIiC table is copied from `make baselines`' out/baselines.md; the rows of
    the three methods that need no warehouse are recomputed here, so they cannot drift from the code."""
    ctx = Context(shared_data=str(shared_data))
    methods = ["Lemma", "Always yes", "Berant I"]
    frame = evaluate_many(methods, sherliic_dev, ctx, show_progress=False).frame()
    fresh = {" ".join(line.split()) for line in report.sherliic_table(frame, methods).splitlines()}
    doc = (Path(__file__).parents[1] / "docs" / "baselines.md").read_text()
    start = doc.index("<!-- copied from out/baselines.md -->")
    block = doc[start : doc.index("<!-- end of copy -->", start)]
    quoted = [
        " ".join(line.split())
        for line in block.splitlines()
        if line.startswith(tuple(f"| {m} " for m in methods))
    ]
    assert len(quoted) == 3
    assert [row for row in quoted if row not in fresh] == []


def test_one_report_shows_one_build(fresh_target, tmp_path, monkeypatch, capsys):
    """Rows of two builds never share a report: `one` refuses to merge into a CSV of another build (one
    line, exit 2, nothing written), and a report of mixed rows is refused."""
    out = tmp_path / "out"
    out.mkdir()
    other = report.write_csv(
        pd.DataFrame(
            [dict.fromkeys(RESULT_COLUMNS, 0.5) | {"method": "Lemma", "dataset": "d", "split": "dev"}]
        ),
        out / "baselines.csv",
        BuildRef("trial", 3),
    )
    before = other.read_text()
    monkeypatch.setenv("DATABASE_URL", fresh_target.url())
    monkeypatch.setenv("SHERLIIC_DATA", str(tmp_path / "no-shared-data"))
    capsys.readouterr()
    assert cli.main(["one", "Always yes", "--out", str(out), "--no-load"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds results of build trial #3, this run reads build default" in err[0]
    assert other.read_text() == before
    mixed = pd.concat(
        [pd.read_csv(other), pd.read_csv(other).assign(build="default", build_id=pd.NA)], ignore_index=True
    )
    with pytest.raises(BuildMismatch, match="one report shows one build"):
        report.markdown(mixed, ["Lemma"])
