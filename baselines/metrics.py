"""Evaluation metrics (docs/design.md §7–§8). Every definition here is pinned by tests/test_metrics.py.

Conventions
- A prediction is positive iff `score >= threshold`.
- The precision-recall curve has one operating point per DISTINCT score t (items with tied scores enter
  together), sorted by decreasing t: precision = TP/(TP+FP), recall = TP/P at `score >= t`.
- The two areas below integrate that curve extended horizontally to recall 0 (a point (0, p_first) with
  the precision of the highest threshold). A perfect ranking has area 1, a constant score is a single
  point and has normalized AUC 0. (sklearn's
  `precision_recall_curve` instead anchors at (0, 1), which would give a constant score half the
  normalized area; we do not follow it there.)
- Precision of an empty prediction set is 0, recall without positives is 0, F1 = 0 when P + R = 0.
- F1-optimal threshold: the t maximising F1 over the curve's points; among equal F1 the LOWEST t (the
  higher recall), as the original code does (first maximum over sklearn's ascending thresholds).
- AUC for precision >= 0.5 (Hosseini et al. 2018): trapezoidal area under the curve (x = recall,
  y = precision) through the points whose precision is >= 0.5; 0 with fewer than two such points.
- Normalized AUC (Li et al. 2022): ∫ max(p - ξ, 0) dr / (1 - ξ), ξ = positive rate of the split, with p
  linear between consecutive points (a segment crossing ξ is clipped exactly); 0 if ξ = 1.
- ROC AUC: probability that a random positive scores higher than a random negative, ties count 1/2
  (Mann-Whitney); NaN when one class is absent.
"""

from __future__ import annotations

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
        raise ValueError("scores contain NaN; replace uncovered items first (see baselines.evaluate)")
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
    """One (precision, recall) point per distinct score, thresholds decreasing."""
    y, s = _arrays(labels, scores)
    if len(s) == 0:
        empty = np.array([], dtype=float)
        return PRCurve(empty, empty, empty, 0)
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    tp = np.cumsum(y_sorted)
    fp = np.cumsum(~y_sorted)
    # the last index of every run of equal scores: ties enter the prediction together
    last = np.r_[np.flatnonzero(np.diff(s_sorted) != 0), len(s_sorted) - 1]
    tp, fp = tp[last], fp[last]
    n_pos = int(y.sum())
    precision = tp / (tp + fp)
    recall = tp / n_pos if n_pos else np.zeros_like(precision, dtype=float)
    return PRCurve(s_sorted[last], precision.astype(float), np.asarray(recall, dtype=float), n_pos)


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


def _anchored_curve(labels, scores) -> tuple[np.ndarray, np.ndarray]:
    """(recall, precision) of the PR curve extended to recall 0 at its first precision, recall increasing."""
    curve = pr_curve(labels, scores)
    first_precision = curve.precision[:1] if len(curve.precision) else np.array([0.0])
    return np.r_[0.0, curve.recall], np.r_[first_precision, curve.precision]


def auc_pr_above(labels, scores, min_precision: float = 0.5) -> float:
    """Hosseini et al. (2018): area under the PR curve through its points with precision >= min_precision."""
    recall, precision = _anchored_curve(labels, scores)
    keep = precision >= min_precision
    r, p = recall[keep], precision[keep]
    if len(r) < 2:
        return 0.0
    return float(np.trapezoid(p, r))


def auc_normalized(labels, scores, xi: float | None = None) -> float:
    """Li et al. (2022): ∫ max(p − ξ, 0) dr / (1 − ξ), ξ = positive rate unless given."""
    y, _ = _arrays(labels, scores)
    if xi is None:
        xi = float(y.mean()) if len(y) else 0.0
    if xi >= 1.0:
        return 0.0
    recall, precision = _anchored_curve(labels, scores)
    total = 0.0
    for (r0, p0), (r1, p1) in zip(
        zip(recall[:-1], precision[:-1], strict=True),
        zip(recall[1:], precision[1:], strict=True),
        strict=True,
    ):
        dr = r1 - r0
        if dr == 0:
            continue
        a, b = p0 - xi, p1 - xi
        if a >= 0 and b >= 0:
            total += dr * (a + b) / 2
        elif a > 0 or b > 0:  # the segment crosses ξ: only the triangle above it counts
            hi = max(a, b)
            total += dr * hi * hi / (2 * (hi - min(a, b)))
    return total / (1 - xi)


def roc_auc(labels, scores) -> float:
    """ROC AUC with ties counted 1/2; NaN when only one class is present."""
    y, s = _arrays(labels, scores)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    # average ranks handle ties exactly (Mann-Whitney U)
    order = np.argsort(s, kind="stable")
    ranks = np.empty(len(s), dtype=float)
    s_sorted = s[order]
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s_sorted[j + 1] == s_sorted[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    u = ranks[y].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def coverage(scores) -> tuple[int, int]:
    """(n_items, n_covered): items with a non-NaN score are covered."""
    s = np.asarray(scores, dtype=float)
    return len(s), int((~np.isnan(s)).sum())
