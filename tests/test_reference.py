"""The plain-Python reference of docs/design.md §4–§5, pinned on hand-computed examples."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from benchmarks.reference import TOP, Params, compute, slot_candidates

P = "nsubj^-___lead___dobj"
H = "nsubj^-___govern___dobj"
C = "nsubjpass^-___lead___prep___by___pobj"

# x1..x6 persons (x1..x3 also politicians), y1..y6 cities, z1 z2 untyped.
TYPES = {f"x{i}": ["person"] + (["politician"] if i <= 3 else []) for i in range(1, 7)}
TYPES.update({f"y{i}": ["city"] for i in range(1, 7)})
INSTANCES = (
    [(P, f"x{i}", f"y{i}") for i in range(1, 7)]
    + [(P, "x1", "y1")]  # a repeated instance: set semantics, it counts once
    + [(H, f"x{i}", f"y{i}") for i in range(1, 5)]
    + [(H, "z1", "z2"), (H, "z1", "y5")]
    + [(C, f"y{i}", f"x{i}") for i in range(1, 4)]
    + [(C, "y5", "z2")]
)
N_ENTITIES = 14  # x1..x6, y1..y6, z1, z2
STRUCTURAL = Params(top_k_types=3, r_min=3, min_relv=0, min_sigma=0, min_esr=0)


def test_slot_candidates_ties_by_name_and_top_padding():
    counts = Counter({"b": 3, "a": 3, "c": 1})
    assert slot_candidates(counts, 2) == ["a", "b"]
    assert slot_candidates(counts, 3) == ["a", "b", "c"]
    assert slot_candidates(counts, 5) == ["a", "b", "c", TOP]
    assert slot_candidates(Counter(), 5) == [TOP]


def test_typed_relations_with_top_and_tsg():
    typed = compute(INSTANCES, TYPES, STRUCTURAL).typed_relations
    got = {(r.path, r.type_a, r.type_b): (r.n_entity_pairs, r.tsg_a, r.tsg_b) for r in typed.itertuples()}
    expected = {
        # P: slot 1 person 6, politician 3 -> [person, politician, ⊤]; slot 2 city 6 -> [city, ⊤].
        (P, "person", "city"): (6, ["person"], ["city"]),
        (P, "person", TOP): (6, ["person"], ["city"]),
        (P, "politician", "city"): (3, ["person", "politician"], ["city"]),
        (P, "politician", TOP): (3, ["person", "politician"], ["city"]),
        (P, TOP, "city"): (6, ["person"], ["city"]),
        (P, TOP, TOP): (6, ["person"], ["city"]),
        # H: z1 is untyped, so ⊤ slots of H have an empty intersection -> {⊤}.
        (H, "person", "city"): (4, ["person"], ["city"]),
        (H, "person", TOP): (4, ["person"], ["city"]),
        (H, "politician", "city"): (3, ["person", "politician"], ["city"]),
        (H, "politician", TOP): (3, ["person", "politician"], ["city"]),
        (H, TOP, "city"): (5, [TOP], ["city"]),
        (H, TOP, TOP): (6, [TOP], [TOP]),
        # C: slot 2 person 3 = politician 3 (tie by name), then ⊤; slot 1 city 4 -> [city, ⊤].
        (C, "city", "person"): (3, ["city"], ["person", "politician"]),
        (C, "city", "politician"): (3, ["city"], ["person", "politician"]),
        (C, "city", TOP): (4, ["city"], [TOP]),
        (C, TOP, "person"): (3, ["city"], ["person", "politician"]),
        (C, TOP, "politician"): (3, ["city"], ["person", "politician"]),
        (C, TOP, TOP): (4, ["city"], [TOP]),
    }
    assert got == expected
    # k = 2: ties in C's slot 2 keep person and politician and no ⊤; r_min = 4 drops the size-3 ones.
    typed2 = compute(INSTANCES, TYPES, Params(top_k_types=2, r_min=4)).typed_relations
    assert {(r.path, r.type_a, r.type_b) for r in typed2.itertuples()} == {
        (P, "person", "city"),
        (P, "person", TOP),
        (H, "person", "city"),
        (H, "person", TOP),
    }


def _cands(params: Params = STRUCTURAL) -> dict:
    cands = compute(INSTANCES, TYPES, params).inference_candidates
    return {
        (
            r.premise_path,
            r.premise_type_a,
            r.premise_type_b,
            r.hypothesis_path,
            r.hypothesis_type_a,
            r.hypothesis_type_b,
            r.alignment,
        ): r
        for r in cands.itertuples()
    }


def test_straight_candidate_scores_by_hand():
    cands = _cands()
    r = cands[(P, "person", "city", H, "person", "city", "straight")]
    assert (r.premise_size, r.hypothesis_size, r.overlap_size) == (6, 4, 4)
    assert (r.n_overlap_arg1, r.n_overlap_arg2) == (4, 4)
    assert r.relv == pytest.approx(4 * N_ENTITIES**2 / (6 * 4), abs=1e-9)
    assert r.relv == pytest.approx(32.666666666666664, abs=1e-9)
    assert r.sigma == pytest.approx(15.719246342772133, abs=1e-9)
    assert r.esr == pytest.approx(1.0, abs=1e-12)
    assert r.score == pytest.approx(r.relv * r.sigma * r.esr, rel=1e-12)
    # The reverse direction: H ⊆ P, so the ¬B term is 0.
    back = cands[(H, "person", "city", P, "person", "city", "straight")]
    assert back.sigma == pytest.approx(8 * math.log(4 * 196 / 24), abs=1e-9)
    assert back.sigma == pytest.approx(27.8908415200197, abs=1e-9)


def test_crossed_candidates_and_top_compatibility():
    cands = _cands()
    r = cands[(P, "politician", "city", C, "city", "politician", "crossed")]
    assert (r.premise_size, r.hypothesis_size, r.overlap_size) == (3, 3, 3)
    assert r.relv == pytest.approx(3 * 196 / 9, abs=1e-9)
    assert r.sigma == pytest.approx(6 * math.log(3 * 196 / 9), abs=1e-9)
    assert r.sigma == pytest.approx(25.077014223374448, abs=1e-9)
    # No pair of P occurs in C in the same orientation: P vs C is only ever crossed.
    assert not [k for k in cands if {k[0], k[3]} == {P, C} and k[6] == "straight"]
    # Crossed from C's side: overlap counts in C's (the premise's) orientation.
    back = cands[(C, "city", "person", P, "person", "city", "crossed")]
    assert (back.overlap_size, back.n_overlap_arg1, back.n_overlap_arg2) == (3, 3, 3)
    # H_{⊤,city} has tsg_a = {⊤}: compatible with P's {person}.
    assert (H, TOP, "city", P, "person", "city", "straight") in cands
    # Same path never pairs with itself (typed variants of one relation are dropped).
    assert all(k[0] != k[3] for k in cands)


def test_thresholds_and_top_n():
    # σ ≥ 15.72 keeps P_{person,city} ⇒ H_{person,city} (σ = 15.719...) only just below 15.72.
    strict = _cands(Params(top_k_types=3, r_min=3, min_relv=0, min_sigma=15.72, min_esr=0))
    assert (P, "person", "city", H, "person", "city", "straight") not in strict
    loose = _cands(Params(top_k_types=3, r_min=3, min_relv=0, min_sigma=15.71, min_esr=0))
    assert (P, "person", "city", H, "person", "city", "straight") in loose
    # Relv threshold: 32.67 < 33.
    assert (P, "person", "city", H, "person", "city", "straight") not in _cands(
        Params(top_k_types=3, r_min=3, min_relv=33, min_sigma=0, min_esr=0)
    )
    # r_min = 5: |A∩B| = 4 < 5.
    assert (P, "person", "city", H, "person", "city", "straight") not in _cands(
        Params(top_k_types=3, r_min=5, min_relv=0, min_sigma=0, min_esr=0)
    )
    # top_n = 1: one premise per hypothesis, the best by Relv·σ·esr.
    full = compute(INSTANCES, TYPES, STRUCTURAL).inference_candidates
    top1 = compute(
        INSTANCES, TYPES, Params(top_k_types=3, r_min=3, min_relv=0, min_sigma=0, min_esr=0, top_n_premises=1)
    ).inference_candidates
    hyp = ["hypothesis_path", "hypothesis_type_a", "hypothesis_type_b"]
    assert len(top1) == full.groupby(hyp).ngroups
    assert (top1.rank_for_hypothesis == 1).all()
    best = full.groupby(hyp).score.max()
    for r in top1.itertuples():
        assert r.score == best[(r.hypothesis_path, r.hypothesis_type_a, r.hypothesis_type_b)]


def test_incompatible_type_signatures_are_rejected():
    # u1..u3 are person+organization; T1's other subjects are persons, T2's organizations, so
    # tsg_a(T1) = {person}, tsg_a(T2) = {organization}: they overlap on u1..u3 but are incompatible.
    t1, t2 = "nsubj^-___own___dobj", "nsubj^-___sell___dobj"
    types = {f"u{i}": ["organization", "person"] for i in range(1, 4)}
    types.update({f"v{i}": ["person"] for i in range(1, 4)})
    types.update({f"w{i}": ["organization"] for i in range(1, 4)})
    types.update({f"y{i}": ["city"] for i in range(1, 4)})
    rows = [(t1, f"u{i}", f"y{i}") for i in range(1, 4)] + [(t1, f"v{i}", f"y{i}") for i in range(1, 4)]
    rows += [(t2, f"u{i}", f"y{i}") for i in range(1, 4)] + [(t2, f"w{i}", f"y{i}") for i in range(1, 4)]
    params = Params(top_k_types=1, r_min=3, min_relv=0, min_sigma=0, min_esr=0)
    result = compute(rows, types, params)
    typed = {(r.path, r.type_a, r.type_b): r.tsg_a for r in result.typed_relations.itertuples()}
    assert typed == {(t1, "person", "city"): ["person"], (t2, "organization", "city"): ["organization"]}
    assert result.inference_candidates.empty
    # k = 2: T1_{organization,·} and T2_{person,·} (the u's only) have tsg_a = {organization, person},
    # compatible with everything here; T1_{person,·} vs T2_{organization,·} stays incompatible.
    result2 = compute(rows, types, Params(top_k_types=2, r_min=3, min_relv=0, min_sigma=0, min_esr=0))
    keys = {
        (r.premise_path, r.premise_type_a, r.hypothesis_path, r.hypothesis_type_a)
        for r in result2.inference_candidates.itertuples()
    }
    assert (t1, "organization", t2, "person") in keys and (t1, "person", t2, "person") in keys
    assert (t1, "organization", t2, "organization") in keys
    assert (t1, "person", t2, "organization") not in keys and (t2, "organization", t1, "person") not in keys
