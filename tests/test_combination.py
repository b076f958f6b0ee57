"""Learned combination on small synthetic data: features, standardized coefficients, cross-fitting."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from baselines import combination as comb


def synthetic(n: int = 80, seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Items whose label follows score `good`; `noise` is random, `partial` is half uncovered."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 2 == 0
    good = labels * 1.0 + rng.normal(0, 0.3, n)
    noise = rng.normal(0, 1, n)
    partial = np.where(np.arange(n) % 4 < 2, rng.normal(0, 1, n), np.nan)
    items = pd.DataFrame(
        {
            "dataset": ["sherliic"] * (n - 2) + ["levy_holt"] * 2,
            "label": labels,
            "extra": [{"lm_split": "train" if i < n * 3 // 4 else "dev"} for i in range(n)],
        }
    )
    scores = pd.DataFrame(
        {"good": good, "noise": noise, "partial": partial, "constant": 1.0}, index=items.index
    )
    return items, scores


def test_features_fill_uncovered_and_drop_constant_columns() -> None:
    scores = pd.DataFrame(
        {"a": [1.0, np.nan, 3.0], "b": [2.0, 2.0, 2.0], "c": [np.nan] * 3, "a_again": [1.0, np.nan, 3.0]}
    )
    features = comb.Features.fit(scores)
    assert features.names == ["a", "covered:a"] and features.duplicates == {"a_again": "a"}
    np.testing.assert_array_equal(features.transform(scores), [[1, 1], [1, 0], [3, 1]])


def test_the_informative_score_carries_the_weight() -> None:
    items, scores = synthetic()
    result, combo = comb.score_with(scores, items)
    coef = combo.coefficients()
    assert coef.loc[0, "feature"] == "good" and coef.loc[0, "coefficient"] > 0
    assert abs(coef.set_index("feature").loc["noise", "coefficient"]) < coef.loc[0, "coefficient"] / 3
    # standardized: refitting on z-scored inputs by hand gives the same coefficients
    train = comb.lm_split(items) == "train"
    x = combo.features.transform(scores[train])
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    from sklearn.linear_model import LogisticRegression

    by_hand = LogisticRegression(C=1.0, max_iter=5000).fit(z, items.loc[train, "label"].to_numpy(bool))
    expected = dict(zip(combo.features.names, by_hand.coef_[0], strict=True))
    for row in coef.itertuples(index=False):
        assert row.coefficient == pytest.approx(expected[row.feature], rel=1e-4, abs=1e-6)
    # dev items scored by the model, training items out of fold, other benchmarks uncovered
    dev = ~train & (items["dataset"] == "sherliic")
    np.testing.assert_allclose(result[dev].to_numpy(), combo.predict(scores[dev]))
    np.testing.assert_allclose(
        result[train].to_numpy(), comb.cross_fitted(scores[train], items.loc[train, "label"].to_numpy(bool))
    )
    assert result[items["dataset"] == "levy_holt"].isna().all()
    labels = items.loc[dev, "label"].to_numpy(bool)
    assert result[dev][labels].mean() > result[dev][~labels].mean()


def test_no_training_split_means_not_covered() -> None:
    items, scores = synthetic()
    items["extra"] = [{}] * len(items)
    result, combo = comb.score_with(scores, items)
    assert combo is None and result.isna().all()


def test_report(tmp_path) -> None:
    items, scores = synthetic()
    _, combo = comb.score_with(scores, items)
    rows = pd.DataFrame(
        [
            {"split": "lm_dev", "threshold": 0.25, "precision": 0.5, "recall": 1.0, "f1": 2 / 3}
            | {"n_covered": 20, "n_items": 20}
        ]
    )
    csv_path, md_path = comb.write_report(combo, rows, tmp_path)
    assert pd.read_csv(csv_path).loc[0, "feature"] == "good"
    row = next(line for line in md_path.read_text().splitlines() if line.startswith("| lm_dev"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells == ["lm_dev", "lm_split=train", "0.2500", "0.500", "1.000", "0.667", "20/20"]


def test_levy_holt_items_train_on_their_train_split() -> None:
    """Levy/Holt (and each directional subset) gets its own model, trained on its train split."""
    items, scores = synthetic()
    items["dataset"] = "levy_holt"
    items["split"] = ["train" if i < 60 else "dev" for i in range(len(items))]
    items["extra"] = [{}] * len(items)
    result, combo = comb.score_with(scores, items)
    train = items["split"] == "train"
    labels = items.loc[train, "label"].to_numpy(bool)
    np.testing.assert_allclose(result[train].to_numpy(), comb.cross_fitted(scores[train], labels))
    refit = comb.fit(scores[train], labels)
    np.testing.assert_allclose(result[~train].to_numpy(), refit.predict(scores[~train]))
    # a Zeichner item has no training split: not covered; a SherLIiC item without lm_split=train neither
    items.loc[0, "dataset"] = "zeichner"
    assert np.isnan(comb.score_with(scores, items)[0][0])
