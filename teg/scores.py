"""Relv, σ and esr (docs/design.md §5): the one Python definition of the candidate scores.

The dbt models compute the same formulas in SQL (`int_candidate_scores`); the plain-Python reference
build (:mod:`benchmarks.reference`) and the demo's expected scores use these functions, and
tests/test_scores.py pins them on a hand-computed example.
"""

from __future__ import annotations

import math


def relv(overlap: int, size_a: int, size_b: int, n_entities: int) -> float:
    """Relv(A,B) = P(B|A)/P(B) = |A∩B|·|E|² / (|A|·|B|)."""
    return overlap * n_entities * n_entities / (size_a * size_b)


def sigma(overlap: int, size_a: int, size_b: int, n_entities: int) -> float:
    """σ(A,B) = P(B|A)·lrs(A,B) = 2|A∩B|·Σ_{H∈{B,¬B}} P(H|A)·log Relv(A,H); P(H|A)=0 terms give 0."""
    p_b_given_a = overlap / size_a
    p_b = size_b / (n_entities * n_entities)
    total = 0.0
    if p_b_given_a > 0:
        total += p_b_given_a * math.log(p_b_given_a / p_b)
    p_not = 1.0 - p_b_given_a
    if p_not > 0:
        total += p_not * math.log(p_not / (1.0 - p_b))
    return 2.0 * overlap * total


def esr(distinct_entities: int, overlap: int) -> float:
    """esr = |π₁(A∩B) ∪ π₂(A∩B)| / (2|A∩B|): the distinct entities of the overlap's pairs (either
    role) over twice the number of pairs."""
    return distinct_entities / (2 * overlap)
