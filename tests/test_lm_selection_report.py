"""The selection's variants and report (lm.selection, lm.selection_report) on hand-made
out-of-fold scores: no model is trained here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_lm_selection import levy_holt_like

from evaluation import metrics
from lm import selection, selection_report
from lm.verifier import VerifierSpec


def test_the_zero_shot_cosine_alone_is_a_variant_that_costs_no_training(tmp_path):
    items = levy_holt_like()
    spec = VerifierSpec("minilm", ("y because x",), dataset="levy_holt", seeds=(0,), epochs=1, folds=3)
    rng = np.random.default_rng(0)
    forward = pd.Series(rng.random(len(items)), index=items.index)
    cosine = pd.Series(rng.random(len(items)), index=items.index)
    scores = selection.CandidateScores(
        spec, "tm", items, {0: forward}, cosine=cosine, epochs=1, train_examples=50.0, train_seconds=12.0
    )
    variants = (selection.Variant(), selection.Variant(cosine=0.75), selection.Variant(cosine=1))
    rows = pd.DataFrame(selection.honest_rows(scores, variants))
    assert list(rows.variant) == ["fine-tuned", "cosine 0.75", "zero-shot cosine"]
    alone = rows.set_index("variant").loc["zero-shot cosine"]
    labels = items["label"].to_numpy(bool)
    assert alone.roc_auc == pytest.approx(metrics.roc_auc(labels, cosine.to_numpy()))  # the cosine itself
    assert (alone.epochs, alone.train_examples, alone.train_seconds) == (0, 0, 0)  # nothing trained
    tuned = rows.set_index("variant").loc["cosine 0.75"]
    assert (tuned.epochs, tuned.train_examples, tuned.train_seconds) == (1, 50, 12)  # the fold models'
    text = selection_report.markdown(rows)
    assert "| zero-shot cosine | tm_cv |" in text and "| no training |" in text
    assert "1 ep, " in text  # the trained variants keep their cost
    # the cost plot draws the untrained variant as a line (no point at zero on a log axis)
    assert selection_report.plot_cost(rows, tmp_path / "cost.png").is_file()


def test_select_report_rewrites_the_report_from_the_selection_file(tmp_path, capsys):
    from lm import cli

    assert cli.main(["select-report", "--out", str(tmp_path)]) == 2  # no selection file yet
    assert "no selection file" in capsys.readouterr().err
    items = levy_holt_like()
    spec = VerifierSpec("minilm", ("y because x",), dataset="levy_holt", seeds=(0, 1), epochs=1, folds=3)
    rng = np.random.default_rng(1)
    forward = {seed: pd.Series(rng.random(len(items)), index=items.index) for seed in (0, 1)}
    scores = selection.CandidateScores(spec, "tm", items, forward, epochs=1, train_examples=50.0)
    (tmp_path / "lm").mkdir()
    pd.DataFrame(selection.honest_rows(scores)).to_csv(tmp_path / "lm" / "selection.csv", index=False)
    assert cli.main(["select-report", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "lm" / "selection.md").read_text()
    assert "## levy_holt" in text and "| 2 |" in text  # two seeds, their mean ± sd and ensemble
    assert (tmp_path / "lm" / "selection_cost.png").is_file()
