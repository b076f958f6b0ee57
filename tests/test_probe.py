"""Hypothesis-only probe on small synthetic benchmarks."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from baselines import probe


def synthetic(n: int, *, leak: bool, dataset: str = "sherliic", offset: int = 0) -> pd.DataFrame:
    """Items whose label is (leak=True) or is not (leak=False) given away by the hypothesis' verb."""
    rows = []
    for i in range(n):
        label = i % 2 == 0
        verb = ("own" if label else "visit") if leak else ("own" if (i // 2) % 2 else "visit")
        rows.append(
            {
                "dataset": dataset,
                "premise_path": f"nsubj^-___p{i + offset}___dobj",
                # a second lemma weakly tied to the label gives distinct scores (a two-valued score has a
                # one-point PR curve, whose area is 0 by evaluation.metrics' convention)
                "hypothesis_path": f"nsubj^-___{verb}___dobj"
                if not (leak and i % 4 < 2)
                else f"nsubj^-___{verb}___prep___{'with' if label else 'for'}___pobj",
                "hypothesis_type_a": "person",
                "hypothesis_type_b": "city",
                "premise_text": f"A p{i + offset} B",
                "hypothesis_text": f"A {verb} B",
                "hypothesis_middle": None,
                "label": label,
            }
        )
    return pd.DataFrame(rows)


def test_features_are_hypothesis_only() -> None:
    item = pd.Series(
        {
            "premise_path": "nsubj^-___buy___dobj",
            "hypothesis_path": "nsubjpass^-___own___prep___by___pobj",
            "hypothesis_type_a": "company",
            "hypothesis_type_b": None,
        }
    )
    feats = probe.hypothesis_features(item)
    # no type features: SherLIiC-dev's types come with its templates, withheld for a share of positives
    assert feats == {"lemma=own": 1.0, "lemma=by": 1.0, "voice=passive": 1.0, "reversed=False": 1.0}
    text_item = pd.Series(
        {
            "hypothesis_path": None,
            "hypothesis_middle": "was bought by",
            "hypothesis_text": "X was bought by Y",
        }
    )
    assert probe.hypothesis_features(text_item) == {
        "lemma=be": 1.0,
        "lemma=buy": 1.0,
        "lemma=by": 1.0,
        "voice=passive": 1.0,
    }
    # Levy/Holt: the text even when the loader parsed a path (training files are not parsed)
    parsed = pd.Series({**text_item, "dataset": "levy_holt/orig", "hypothesis_path": "nsubj^-___buy___dobj"})
    assert probe.hypothesis_features(parsed) == probe.hypothesis_features(text_item)


def test_probe_detects_a_leaking_hypothesis_and_not_a_clean_one() -> None:
    leaky = probe.evaluate(probe.fit(synthetic(40, leak=True)), synthetic(20, leak=True, offset=100))
    # scores: own+company > own+city > visit+city > visit+film -> points (r=.5, p=1), (r=1, p=1), ...
    # a perfect ranking: the curve (extended to recall 0 at precision 1) has normalized area 1
    assert leaky["roc_auc"] == pytest.approx(1.0) and leaky["auc_normalized"] == pytest.approx(1.0)
    clean = probe.evaluate(probe.fit(synthetic(40, leak=False)), synthetic(20, leak=False, offset=100))
    assert clean["roc_auc"] == pytest.approx(0.5)
    assert clean["auc_normalized"] == pytest.approx(0.0)


def test_registered_scores_are_out_of_fold_for_training_items() -> None:
    train = synthetic(40, leak=True)
    items = pd.concat(
        [
            train.iloc[:4],
            synthetic(2, leak=True, offset=500),
            synthetic(1, leak=True, dataset="zeichner", offset=900),
        ],
        ignore_index=True,
    )
    scores = probe.score_items(items, {"sherliic": train})
    model = probe.fit(train)
    fresh = probe.predict(model, items.iloc[4:6])
    assert scores.iloc[4:6].tolist() == pytest.approx(fresh.tolist())
    oof = probe.out_of_fold(train)
    assert scores.iloc[:4].tolist() == pytest.approx(oof[:4].tolist())
    assert math.isnan(scores.iloc[6])  # no training split for this benchmark


def test_one_class_training_split_is_an_error() -> None:
    with pytest.raises(ValueError, match="both labels"):
        probe.fit(synthetic(4, leak=True).assign(label=True))


def test_report_files(tmp_path) -> None:
    table = pd.DataFrame(
        [
            {
                "benchmark": "X",
                "train": "t",
                "eval": "d",
                "n_train": 4,
                "n_items": 2,
                "positive_rate": 0.5,
                "auc_normalized": 0.25,
                "roc_auc": 0.75,
            }
        ]
    )
    csv_path, md_path = probe.write_report(table, tmp_path)
    assert pd.read_csv(csv_path).loc[0, "auc_normalized"] == 0.25
    assert "| X | t | d | 4 | 2 | 0.500 | 0.250 | 0.750 |" in _table_rows(md_path.read_text())
    assert "Build: none." in md_path.read_text()  # every report names its build; this one reads none


def _table_rows(markdown: str) -> list[str]:
    """The Markdown table rows of a text, spaces collapsed (padding does not matter)."""
    return [" ".join(line.split()) for line in markdown.splitlines() if line.strip().startswith("| ")]


@pytest.fixture(scope="module")
def strength(shared_data) -> pd.DataFrame:
    return probe.artefact_strength(shared_data)


def test_artefact_strength_on_the_shared_data(strength) -> None:
    assert {"SherLIiC-dev", "Levy/Holt", "Levy/Holt DirTrue vs DirFalse"} <= set(strength["benchmark"])
    assert strength["auc_normalized"].between(0, 1).all()


def test_docs_quote_the_current_probe(strength, tmp_path) -> None:
    """docs/performance.md copies its probe rows from `make probe`'s out/probe/probe.md: recomputed here,
    so a change to the probe or the data cannot leave stale figures there."""
    _, md_path = probe.write_report(strength, tmp_path)
    fresh = set(_table_rows(md_path.read_text()))
    doc = (Path(__file__).parents[1] / "docs" / "performance.md").read_text()
    start = doc.index("<!-- copied from out/probe/probe.md -->")
    quoted = _table_rows(doc[start : doc.index("<!-- end of copy -->", start)])
    assert len(quoted) > 2  # header, rule and at least one row
    assert [row for row in quoted if row not in fresh] == []
