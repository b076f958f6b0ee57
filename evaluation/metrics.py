"""Evaluation metrics (docs/design.md §7–§8). Every definition here is pinned by tests/test_metrics.py.

The curve points and the ROC AUC come from scikit-learn (`precision_recall_curve`, `roc_auc_score`);
this module adds only the conventions below, chiefly how the PR curve is anchored at recall 0.

Conventions
- A prediction is positive iff `score >= threshold`.
- The precision-recall curve has one operating point per DISTINCT score t (items with tied scores enter
  together), sorted by decreasing t: precision = TP/(TP+FP), recall = TP/P at `score >= t`. These are
  sklearn's points without the (recall 0, precision 1) point it appends; recall is 0 without positives.
- The two areas below integrate that curve extended horizontally to recall 0 (a point (0, p_first) with
  the precision of the highest threshold; `anchored_pr_curve`). A perfect ranking has area 1, a constant
  score is a single point and has normalized AUC 0. (sklearn's `precision_recall_curve` instead ends at
  (0, 1), which would give a constant score half the normalized area; we do not follow it there.)
- Precision of an empty prediction set is 0, recall without positives is 0, F1 = 0 when P + R = 0.
- F1-optimal threshold: the t maximising F1 over the curve's points; among equal F1 the LOWEST t (the
  higher recall), as the original code does (first maximum over sklearn's ascending thresholds).
- AUC for precision >= 0.5 (Hosseini et al. 2018): trapezoidal area under the curve (x = recall,
  y = precision) through the points whose precision is >= 0.5; 0 with fewer than two such points.
- Normalized AUC (Li et al. 2022): ∫ max(p - ξ, 0) dr / (1 - ξ), ξ = positive rate of the split, with p
  linear between consecutive points (a segment crossing ξ is clipped exactly); 0 if ξ = 1.
- ROC AUC: probability that a random positive scores higher than a random negative, ties count 1/2
  (Mann-Whitney; sklearn's `roc_auc_score`); NaN when one class is absent.
- Coverage: an item is covered when the method scores it (a finite score); NaN = the method abstains.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PRCurve:
    thresholds: np.ndarray  # decreasing distinct scores
    precision: np.ndarray
    recall: np.ndarray
    n_positive: int


def _arrays(labels, scores) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(labels, dtype=bool)
    s = np.asarray(scores, dtype=float)
    if y.shape != s.shape:
        raise ValueError(f"labels and scores differ in length: {y.shape} vs {s.shape}")
    if np.isnan(s).any():
        raise ValueError("scores contain NaN; replace uncovered items first (see evaluation.evaluate)")
    return y, s


def precision_recall_f1(labels, predictions) -> tuple[float, float, float]:
    """P, R, F1 of boolean predictions."""
    y = np.asarray(labels, dtype=bool)
    pred = np.asarray(predictions, dtype=bool)
    tp = int((y & pred).sum())
    n_pred, n_pos = int(pred.sum()), int(y.sum())
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_pos if n_pos else 0.0
    f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f1


def pr_curve(labels, scores) -> PRCurve:
    """One (precision, recall) point per distinct score, thresholds decreasing (sklearn's points)."""
    y, s = _arrays(labels, scores)
    if len(s) == 0:
        empty = np.array([], dtype=float)
        return PRCurve(empty, empty, empty, 0)
    n_pos = int(y.sum())
    from sklearn.metrics import precision_recall_curve  # on first use: scikit-learn takes ~1 s to import

    with warnings.catch_warnings():  # no positives: sklearn warns and sets recall 1; ours is 0 (below)
        warnings.simplefilter("ignore", UserWarning)
        precision, recall, thresholds = precision_recall_curve(y, s, pos_label=True)
    # sklearn: thresholds ascending, and one more (precision 1, recall 0) point at the end; drop it
    precision, recall = precision[:-1][::-1], recall[:-1][::-1]
    if n_pos == 0:
        recall = np.zeros_like(recall)
    return PRCurve(thresholds[::-1].astype(float), precision.astype(float), recall.astype(float), n_pos)


def _f1(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        f = 2 * p * r / (p + r)
    return np.where(p + r > 0, f, 0.0)


def best_f1_threshold(labels, scores) -> float:
    """F1-optimal threshold (ties -> lowest threshold). Apply with `score >= threshold`."""
    curve = pr_curve(labels, scores)
    if len(curve.thresholds) == 0:
        raise ValueError("cannot tune a threshold on an empty split")
    f1 = _f1(curve.precision, curve.recall)
    best = np.flatnonzero(f1 == f1.max())
    return float(curve.thresholds[best].min())


def anchored_pr_curve(labels, scores) -> tuple[np.ndarray, np.ndarray]:
    """(recall, precision) of the PR curve extended horizontally to recall 0 at its first precision,
    recall increasing: the curve both areas integrate (and the plots draw), not sklearn's (0, 1) anchor."""
    curve = pr_curve(labels, scores)
    first_precision = curve.precision[:1] if len(curve.precision) else np.array([0.0])
    return np.r_[0.0, curve.recall], np.r_[first_precision, curve.precision]


def auc_pr_above(labels, scores, min_precision: float = 0.5) -> float:
    """Hosseini et al. (2018): area under the PR curve through its points with precision >= min_precision."""
    recall, precision = anchored_pr_curve(labels, scores)
    keep = precision >= min_precision
    r, p = recall[keep], precision[keep]
    if len(r) < 2:
        return 0.0
    return _in_unit_range(float(np.trapezoid(p, r)), f"AUC(p ≥ {min_precision})")


def _in_unit_range(value: float, what: str) -> float:
    """An area of a curve inside the unit square: float noise is clipped, anything more is a bug."""
    if not -1e-9 <= value <= 1 + 1e-9:
        raise ValueError(f"{what} = {value!r} is outside [0, 1]")
    return min(1.0, max(0.0, value))


def auc_normalized(labels, scores, xi: float | None = None) -> float:
    """Li et al. (2022): ∫ max(p − ξ, 0) dr / (1 − ξ), ξ = positive rate unless given; in [0, 1].

    Each segment of the anchored curve (precision linear in recall between two points) contributes the
    part of its trapezoid above ξ: all of it when both ends are at or above ξ, the triangle above ξ when
    it crosses ξ, nothing below. Recall only grows along the curve and precision is at most 1, so the
    sum is at most (1 − ξ) · 1 and the ratio at most 1 (a perfect ranking)."""
    y, _ = _arrays(labels, scores)
    if xi is None:
        xi = float(y.mean()) if len(y) else 0.0
    if not 0.0 <= xi <= 1.0:
        raise ValueError(f"xi = {xi!r}: a positive rate lies in [0, 1]")
    if xi >= 1.0 or not y.any():
        return 0.0
    recall, precision = anchored_pr_curve(labels, scores)
    dr = np.diff(recall)
    if (dr < 0).any():
        raise ValueError("recall decreases along the precision-recall curve")
    a, b = precision[:-1] - xi, precision[1:] - xi
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        crossing = np.where(hi > 0, hi * hi / (2 * (hi - lo)), 0.0)  # triangle above ξ
    area = np.where(lo >= 0, (a + b) / 2, np.where(hi > 0, crossing, 0.0))
    return _in_unit_range(float((dr * area).sum()) / (1 - xi), "normalized AUC")


def roc_auc(labels, scores) -> float:
    """ROC AUC with ties counted 1/2 (sklearn); NaN when only one class is present."""
    y, s = _arrays(labels, scores)
    if y.all() or not y.any():
        return float("nan")
    from sklearn.metrics import roc_auc_score  # on first use: scikit-learn takes ~1 s to import

    return float(roc_auc_score(y, s))


def coverage(scores) -> tuple[int, int]:
    """(n_items, n_covered): an item is covered when the method gives it a score (not NaN); an uncovered
    item is scored by the fallback of evaluation.evaluate (its split's minimum, or Lemma's answer)."""
    s = np.asarray(scores, dtype=float)
    return len(s), int((~np.isnan(s)).sum())


def cross_fitted_predictions(labels, scores, folds) -> np.ndarray:
    """Yes/no of each item with a threshold tuned out of fold: the items of fold f are judged by the
    F1-optimal threshold of the items of the other folds (items with fold < 0 are left out: False). The
    thresholds of out-of-fold scores are then out of sample too (lm.selection)."""
    y, s = _arrays(labels, scores)
    f = np.asarray(folds, dtype=int)
    pred = np.zeros(len(y), dtype=bool)
    for fold in sorted(set(f[f >= 0].tolist())):
        here, others = f == fold, (f >= 0) & (f != fold)
        if not others.any():
            continue
        pred[here] = s[here] >= best_f1_threshold(y[others], s[others])
    return pred
