"""The demo job end to end: real spaCy, real loads, real dbt build, on a database of the test's own."""

from __future__ import annotations

import io
from urllib.parse import urlparse

import pytest
from rich.console import Console

from demo.job import classify_candidate, main, print_summary, run_demo
from demo.relations import PLANTED_RULES, noise_paths
from extract.loading import load_corpus
from warehouse.target import Target

# Smaller than the demo's default (50) to keep the test short; the expected scores still clear the
# paper's thresholds by far (tests/test_demo.py checks them for the default size).
TEST_SIZE = 30


@pytest.mark.slow
def test_demo_finds_the_planted_rules_at_the_paper_thresholds(fresh_target: Target, tmp_path):
    out = io.StringIO()
    console = Console(file=out, width=200)
    summary = run_demo(fresh_target, size=TEST_SIZE, out_dir=tmp_path / "demo", processes=2, console=console)
    print_summary(summary, console)
    report = out.getvalue()
    print(report)  # pytest -s shows the measured recall and counts

    assert summary.n_documents > 0 and summary.n_instances > 0 and summary.n_sentences > 0
    assert summary.rejections, "the rejected templates (appositions) must show up as rejected paths"
    assert summary.n_typed_relations > summary.n_relations > 0
    assert summary.n_candidates > 0
    # Recall of the planted entailments among the InfCands at the default thresholds.
    found = [p for p in summary.planted if p.found]
    assert len(summary.planted) == len(PLANTED_RULES)
    assert summary.recall >= 0.8, report
    for p in found:
        assert p.relv >= 1000 and p.sigma >= 15 and p.esr >= 0.6 and p.rank >= 1
    # Unrelated relation pairs (noise relations, or paths of different planted families) are (almost) never
    # accepted: their entity pairs overlap by chance only.
    wrong = summary.candidate_kinds.get("noise relation", 0) + summary.candidate_kinds.get("unrelated", 0)
    assert wrong <= max(5, 0.02 * summary.n_candidates), summary.candidate_kinds
    assert "Planted-rule recall" in report and "make psql" in report

    # Rerunning the load replaces the batch (idempotent): still one corpus batch, same instances.
    with fresh_target.connect() as conn:
        before = conn.execute("select count(*) from raw.relation_instances").fetchone()[0]
    load_corpus(fresh_target, summary.corpus_path, "jsonl", replace=True)
    with fresh_target.connect() as conn:
        after = conn.execute("select count(*) from raw.relation_instances").fetchone()[0]
        batches = conn.execute(
            "select count(*) from raw.load_batches where kind = 'corpus' and status = 'loaded'"
        ).fetchone()[0]
    assert (after, batches) == (before, 1)


def test_classify_candidate():
    rule = PLANTED_RULES[0]
    assert classify_candidate(rule.premise_path, rule.hypothesis_path, rule.alignment) == "planted"
    assert classify_candidate(rule.hypothesis_path, rule.premise_path, rule.alignment) == "reverse of planted"
    assert classify_candidate(rule.premise_path, rule.hypothesis_path, "crossed") != "planted"
    noise = sorted(noise_paths())[0]
    assert classify_candidate(noise, rule.hypothesis_path, "straight") == "noise relation"
    other = PLANTED_RULES[1]
    assert classify_candidate(rule.premise_path, other.hypothesis_path, "straight") == "unrelated"


def test_main_fails_clearly_on_bad_size(fresh_target: Target, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DATABASE_URL", fresh_target.url())
    assert main(["--size", "3", "--out", str(tmp_path)]) == 1
    assert "demo failed" in capsys.readouterr().out


def test_main_fails_clearly_when_the_database_is_unreachable(
    db_target: Target, monkeypatch, capsys, tmp_path
):
    # a database the server does not have
    missing = urlparse(db_target.url())._replace(path="/sherliic_test_no_such_database").geturl()
    monkeypatch.setenv("DATABASE_URL", missing)
    assert main(["--out", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "start the database" in captured.out  # the step that failed
    (line,) = [line for line in captured.err.splitlines() if line.startswith("error:")]
    assert "cannot connect to the database at" in line and "does not exist" in line
