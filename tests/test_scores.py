"""Relv, σ and esr (docs/design.md §5) on hand-computed examples: the one Python definition
(teg.scores) that the reference build and the demo's expected scores use."""

from __future__ import annotations

import math

import pytest

from teg.scores import esr, relv, sigma


def test_relv():
    # |A∩B|·|E|² / (|A|·|B|) = 5·100² / (10·20)
    assert relv(5, 10, 20, 100) == pytest.approx(250.0, rel=1e-12)


def test_sigma_both_terms():
    # σ = 2|A∩B|·[P ln(P/P(B)) + (1−P) ln((1−P)/(1−P(B)))], P = 5/10, P(B) = 20/100².
    assert sigma(5, 10, 20, 100) == pytest.approx(
        10 * (0.5 * math.log(250) + 0.5 * math.log(0.5 / 0.998)), rel=1e-12
    )
    assert sigma(5, 10, 20, 100) == pytest.approx(24.15157869986487, abs=1e-9)


def test_sigma_zero_term_contributes_nothing():
    # A ⊆ B: P(¬B|A) = 0 contributes 0, σ = 2|A∩B|·ln Relv.
    assert sigma(4, 4, 6, 14) == pytest.approx(8 * math.log(4 * 196 / 24), abs=1e-9)


def test_esr():
    # pairs (a,b), (a,c), (d,b): entities {a, b, c, d} over 2·3
    assert esr(4, 3) == pytest.approx(4 / 6, abs=1e-12)
    # (a,b), (b,a): an entity in both roles counts once
    assert esr(2, 2) == pytest.approx(0.5, abs=1e-12)
