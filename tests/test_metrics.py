"""Metric definitions pinned on hand-computed curves (evaluation/metrics.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation import metrics

# labels/scores with ties; sorted: 0.9 (+), 0.8 (+,-), 0.5 (+,-), 0.1 (-); P = 3 of 6
TIED_LABELS = [1, 1, 0, 1, 0, 0]
TIED_SCORES = [0.9, 0.8, 0.8, 0.5, 0.5, 0.1]


def test_pr_curve_groups_ties():
    curve = metrics.pr_curve(TIED_LABELS, TIED_SCORES)
    assert curve.thresholds.tolist() == [0.9, 0.8, 0.5, 0.1]
    assert curve.precision == pytest.approx([1, 2 / 3, 3 / 5, 1 / 2])
    assert curve.recall == pytest.approx([1 / 3, 2 / 3, 1, 1])


def test_best_threshold_and_prf():
    # F1 per threshold: 0.5, 0.667, 0.75, 0.667 -> 0.5
    assert metrics.best_f1_threshold(TIED_LABELS, TIED_SCORES) == 0.5
    pred = np.asarray(TIED_SCORES) >= 0.5
    assert metrics.precision_recall_f1(TIED_LABELS, pred) == pytest.approx((0.6, 1.0, 0.75))


def test_tie_in_f1_takes_lowest_threshold():
    # thresholds 4 and 1 both give F1 = 2/3; the lower one (higher recall) wins
    assert metrics.best_f1_threshold([1, 0, 0, 1], [4, 3, 2, 1]) == 1


def test_auc_pr50_and_normalized_hand_computed():
    # trapezoid over the extension (0,1) and (1/3,1), (2/3,2/3), (1,3/5), (1,1/2) = 1/3 + 5/18 + 19/90 = 37/45
    assert metrics.auc_pr_above(TIED_LABELS, TIED_SCORES) == pytest.approx(37 / 45)
    # xi = 1/2: (1/3)(1/2) + (1/3)(1/2+1/6)/2 + (1/3)(1/6+1/10)/2 = 29/90, / (1 - 1/2)
    assert metrics.auc_normalized(TIED_LABELS, TIED_SCORES) == pytest.approx(29 / 45)


def test_normalized_auc_clips_a_segment_crossing_xi():
    # points (0, 1) extension, (1/3, 1), (2/3, 0.4), (1, 0.5); xi = 0.5; the anchor segment gives (1/3)(1/2);
    # the second segment crosses xi: triangle (1/3) * 0.5 * (0.5 / 0.6) / 2 = 5/72;
    # total 17/72, normalized 17/36
    labels = [1, 1, 0, 0, 0, 1]
    scores = [3, 2, 2, 2, 2, 1]
    assert metrics.auc_normalized(labels, scores) == pytest.approx(17 / 36)
    # precision >= 0.5 keeps (0, 1), (1/3, 1) and (1, 0.5): 1/3 + (2/3) * 1.5 / 2
    assert metrics.auc_pr_above(labels, scores) == pytest.approx(5 / 6)
    assert metrics.roc_auc(labels, scores) == pytest.approx(0.5)


def test_roc_auc_with_ties():
    # positives .9 .8 .5 vs negatives .8 .5 .1: 3 + 2.5 + 1.5 = 7 of 9
    assert metrics.roc_auc(TIED_LABELS, TIED_SCORES) == pytest.approx(7 / 9)


def test_constant_scores():
    labels, scores = [1, 0, 0], [0.3, 0.3, 0.3]
    assert metrics.best_f1_threshold(labels, scores) == 0.3
    # one operating point (1, 1/3), extended to (0, 1/3): below 0.5, and never above xi = 1/3
    assert metrics.auc_pr_above(labels, scores) == 0.0
    assert metrics.auc_normalized(labels, scores) == 0.0
    assert metrics.roc_auc(labels, scores) == 0.5


def test_all_positive():
    labels, scores = [1, 1], [0.2, 0.7]
    assert metrics.best_f1_threshold(labels, scores) == 0.2
    # (0, 1) extension, then (1/2, 1), (1, 1)
    assert metrics.auc_pr_above(labels, scores) == pytest.approx(1.0)
    assert metrics.auc_normalized(labels, scores) == 0.0  # xi = 1: nothing above chance
    assert math.isnan(metrics.roc_auc(labels, scores))


def test_all_negative():
    labels, scores = [0, 0], [0.2, 0.7]
    assert metrics.best_f1_threshold(labels, scores) == 0.2
    assert metrics.precision_recall_f1(labels, [True, True]) == (0.0, 0.0, 0.0)
    assert metrics.auc_pr_above(labels, scores) == 0.0
    assert metrics.auc_normalized(labels, scores) == 0.0
    assert math.isnan(metrics.roc_auc(labels, scores))


def test_yes_no_baseline_curve():
    # points (1/2, 1) at t = 1 and (1, 1/2) at t = 0, extended to (0, 1); xi = 1/2
    labels, scores = [1, 1, 0, 0], [1, 0, 0, 0]
    # 1/2 * 1 + 1/2 * (1 + 1/2) / 2
    assert metrics.auc_pr_above(labels, scores) == pytest.approx(0.875)
    # (1/2 * 1/2 + 1/2 * (1/2 + 0) / 2) / (1 - 1/2)
    assert metrics.auc_normalized(labels, scores) == pytest.approx(0.75)


def test_perfect_ranking_has_area_one():
    labels, scores = [1, 1, 0, 0], [0.9, 0.9, 0.1, 0.1]
    assert metrics.auc_pr_above(labels, scores) == pytest.approx(1.0)
    assert metrics.auc_normalized(labels, scores) == pytest.approx(1.0)


def test_empty_prediction_and_coverage_and_nan():
    assert metrics.precision_recall_f1([1, 0], [False, False]) == (0.0, 0.0, 0.0)
    assert metrics.coverage([0.1, float("nan"), 1.0]) == (3, 2)
    with pytest.raises(ValueError, match="NaN"):
        metrics.pr_curve([1, 0], [0.1, float("nan")])


def test_anchored_curve_is_sklearns_points_extended_horizontally():
    # sklearn's points for TIED (reversed, without its closing (0, 1) point), then the horizontal
    # extension to recall 0 at the first precision (1 here, the top score is a positive)
    recall, precision = metrics.anchored_pr_curve(TIED_LABELS, TIED_SCORES)
    assert recall == pytest.approx([0, 1 / 3, 2 / 3, 1, 1])
    assert precision == pytest.approx([1, 1, 2 / 3, 3 / 5, 1 / 2])
    # where the anchoring differs from sklearn's (0, 1): a constant score stays flat at its precision
    recall, precision = metrics.anchored_pr_curve([1, 0, 0], [0.3, 0.3, 0.3])
    assert recall.tolist() == [0.0, 1.0] and precision == pytest.approx([1 / 3, 1 / 3])


def test_pr_curve_without_positives_has_recall_zero():
    curve = metrics.pr_curve([0, 0], [0.2, 0.7])  # sklearn would set recall 1 (with a warning)
    assert curve.thresholds.tolist() == [0.7, 0.2]
    assert curve.precision.tolist() == [0.0, 0.0] and curve.recall.tolist() == [0.0, 0.0]


def test_normalized_auc_hand_computed_with_a_tie_in_recall():
    # scores .9 .8 .7 .6 .5, labels + - + - -; xi = 2/5. Anchored curve: (0, 1) (1/2, 1) (1/2, 1/2)
    # (1, 2/3) (1, 1/2) (1, 2/5). Above xi: 1/2 * 3/5 + 1/2 * (1/10 + 4/15) / 2 = 47/120; / (3/5) = 47/72
    labels, scores = [1, 0, 1, 0, 0], [0.9, 0.8, 0.7, 0.6, 0.5]
    assert metrics.auc_normalized(labels, scores) == pytest.approx(47 / 72)
    # precision >= 1/2 keeps all but the last point: 1/2 * 1 + 1/2 * (1/2 + 2/3) / 2 = 19/24
    assert metrics.auc_pr_above(labels, scores) == pytest.approx(19 / 24)


def _reference_auc_norm(labels, scores, steps: int = 20001) -> float:
    """∫ max(p − ξ, 0) dr / (1 − ξ) by dense sampling of the anchored curve (precision linear in recall)."""
    recall, precision = metrics.anchored_pr_curve(labels, scores)
    xi = float(np.mean(labels))
    total = 0.0
    for r0, r1, p0, p1 in zip(recall[:-1], recall[1:], precision[:-1], precision[1:], strict=True):
        if r1 > r0:
            t = (np.arange(steps) + 0.5) / steps
            total += (r1 - r0) * float(np.maximum(p0 + t * (p1 - p0) - xi, 0).mean())
    return total / (1 - xi)


def test_areas_stay_in_the_unit_interval_on_random_scores_and_subsets():
    # any labels, any scores (ties, few distinct values, extreme positive rates), any subset of items
    rng = np.random.default_rng(19)
    for _ in range(400):
        n = int(rng.integers(1, 60))
        labels = rng.random(n) < rng.random()
        if rng.random() < 0.5:
            scores = rng.integers(0, int(rng.integers(1, 6)), n).astype(float)
        else:
            scores = rng.random(n)
        for subset in (np.ones(n, bool), rng.random(n) < 0.5):
            y, s = labels[subset], scores[subset]
            if len(y) == 0:
                continue
            norm, above = metrics.auc_normalized(y, s), metrics.auc_pr_above(y, s)
            assert 0.0 <= norm <= 1.0 and 0.0 <= above <= 1.0
            if 0 < y.mean() < 1:
                assert norm == pytest.approx(_reference_auc_norm(y, s), abs=1e-6)


def test_normalized_auc_is_one_for_a_perfect_ranking_and_ignores_monotone_rescaling():
    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(2, 40))
        labels = np.r_[True, False, rng.random(n) < 0.3]
        perfect = labels.astype(float) + rng.random(len(labels)) * 0.5
        assert metrics.auc_normalized(labels, perfect) == pytest.approx(1.0)
        scores = rng.random(len(labels))
        assert metrics.auc_normalized(labels, scores) == pytest.approx(
            metrics.auc_normalized(labels, np.exp(3 * scores) - 5)
        )


def test_an_out_of_range_positive_rate_is_refused():
    with pytest.raises(ValueError, match="positive rate"):
        metrics.auc_normalized([1, 0], [0.2, 0.1], xi=1.5)


def test_cross_fitted_predictions_use_the_other_folds_threshold():
    # fold 0: scores .9 (+) .1 (-); fold 1: .6 (+) .4 (-); fold -1 (cut) is never judged
    labels, scores, folds = [1, 0, 1, 0, 1], [0.9, 0.1, 0.6, 0.4, 0.95], [0, 0, 1, 1, -1]
    # fold 0 is judged by fold 1's threshold (.6), fold 1 by fold 0's (.9)
    pred = metrics.cross_fitted_predictions(labels, scores, folds)
    assert pred.tolist() == [True, False, False, False, False]
