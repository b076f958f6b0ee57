"""Distributional baselines (SQL over the marts) pinned on a hand-computed graph.

The graph is inserted into tables shaped like the marts (warehouse.relations, typed_relations, teg_edges,
untyped_edges, the marts' columns) so every number below can be checked by hand.

Untyped graph (canonical orientation, counts):
    R1 nsubj^-___lead___dobj   (a,b):3  (c,d):1
    R2 nsubj^-___head___dobj   (a,b):2  (e,d):2
    R3 nsubj^-___obey___dobj   (b,a):2  (d,c):5  (a,b):7
    R4 nsubj^-___own___dobj    (e,d):10 (b,a):10 (f,g):20
N = 62; pair totals c(a,b)=12, c(c,d)=1, c(e,d)=12, c(b,a)=12, c(d,c)=5, c(f,g)=20; 7 entities.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from baselines.distributional import compute_scores
from evaluation.registry import REGISTRY, Context
from warehouse.target import Target

LEAD, HEAD, OBEY, OWN = (f"nsubj^-___{v}___dobj" for v in ("lead", "head", "obey", "own"))
EDGES = {
    1: (LEAD, [("a", "b", 3), ("c", "d", 1)]),
    2: (HEAD, [("a", "b", 2), ("e", "d", 2)]),
    3: (OBEY, [("b", "a", 2), ("d", "c", 5), ("a", "b", 7)]),
    4: (OWN, [("e", "d", 10), ("b", "a", 10), ("f", "g", 20)]),
}
# typed_rel_id: (rel_id, type_a, type_b, tsg_a, tsg_b, edges)
TYPED = {
    11: (1, "person", "company", ["person"], ["company"], [("a", "b", 3)]),
    12: (1, "thing", "thing", ["thing"], ["thing"], [("a", "b", 3), ("c", "d", 1)]),
    21: (2, "person", "company", ["person", "leader"], ["company"], [("a", "b", 2), ("e", "d", 2)]),
    # for the w2v+tsg_rel_emb test (tests/test_rel_embeddings.py)
    31: (
        3,
        "military_combatant",
        "region",
        ["military_combatant"],
        ["region"],
        [("d", "c", 5), ("a", "b", 7)],
    ),
    41: (
        4,
        "military_combatant",
        "region",
        ["military_combatant"],
        ["region"],
        [("e", "d", 10), ("f", "g", 20)],
    ),
}


def build_marts(target: Target) -> None:
    """Tables shaped like the dbt marts, holding the graph of the module docstring."""
    with target.connect() as conn:
        conn.execute(
            """
            create schema warehouse;
            create table warehouse.relations (rel_id bigint primary key, path text, n_entity_pairs bigint);
            create table warehouse.untyped_edges (
                rel_id bigint, arg1_entity_id text, arg2_entity_id text, n_instances bigint);
            create table warehouse.typed_relations (
                typed_rel_id bigint, rel_id bigint, path text, type_a text, type_b text,
                tsg_a text[], tsg_b text[], tsg_index int, n_entity_pairs bigint);
            create table warehouse.teg_edges (
                typed_rel_id bigint, rel_id bigint, arg1_entity_id text, arg2_entity_id text,
                n_instances bigint);
            """
        )
        for rel_id, (path, edges) in EDGES.items():
            conn.execute("insert into warehouse.relations values (%s, %s, %s)", (rel_id, path, len(edges)))
            for a1, a2, n in edges:
                conn.execute(
                    "insert into warehouse.untyped_edges values (%s, %s, %s, %s)", (rel_id, a1, a2, n)
                )
        for typed_id, (rel_id, ta, tb, sa, sb, edges) in TYPED.items():
            conn.execute(
                "insert into warehouse.typed_relations values (%s, %s, %s, %s, %s, %s, %s, 0, %s)",
                (typed_id, rel_id, EDGES[rel_id][0], ta, tb, sa, sb, len(edges)),
            )
            for a1, a2, n in edges:
                conn.execute(
                    "insert into warehouse.teg_edges values (%s, %s, %s, %s, %s)",
                    (typed_id, rel_id, a1, a2, n),
                )


def item(prem: str | None, hypo: str | None, types: tuple | None = None) -> dict:
    ta, tb = types or (None, None)
    return {
        "premise_path": prem,
        "hypothesis_path": hypo,
        "premise_type_a": ta,
        "premise_type_b": tb,
        "hypothesis_type_a": ta,
        "hypothesis_type_b": tb,
    }


def rev(path: str) -> str:
    """SherLIiC spelling of the same relation read from the object end."""
    from deppath.paths import reverse_path

    return reverse_path(path)


@pytest.fixture()
def marts_target(fresh_target: Target) -> Target:
    build_marts(fresh_target)
    return fresh_target


def test_untyped_scores_straight_crossed_and_uncovered(marts_target: Target) -> None:
    items = pd.DataFrame(
        [
            item(LEAD, HEAD),  # straight
            item(LEAD, rev(OBEY)),  # crossed: hypothesis given object-first
            item(rev(LEAD), rev(HEAD)),  # both reversed: straight again
            item(LEAD, "nsubj^-___unknown___dobj"),  # hypothesis not in the warehouse
            item(None, HEAD),  # not mappable
        ],
        index=[10, 11, 12, 13, 14],
    )
    s = compute_scores(items, marts_target, "untyped")
    ln = math.log

    # item 10: x = {(a,b):3, (c,d):1}, y = {(a,b):2, (e,d):2}
    assert s.loc[10, "weeds_prec"] == pytest.approx(3 / 4)
    assert s.loc[10, "cl_xy"] == pytest.approx(2 / 4)
    assert s.loc[10, "cl_yx"] == pytest.approx(2 / 4)
    assert s.loc[10, "inv_cl"] == pytest.approx(math.sqrt(0.5 * 0.5))
    # PMI: w_R1(a,b)=ln(3·62/(4·12)), w_R1(c,d)=ln(1·62/(4·1)), w_R2(a,b)=w_R2(e,d)=ln(2·62/(4·12))
    w1_ab, w1_cd, w2 = ln(186 / 48), ln(62 / 4), ln(124 / 48)
    weeds_pmi = w1_ab / (w1_ab + w1_cd)
    lin = (w1_ab + w2) / (w1_ab + w1_cd + 2 * w2)
    assert s.loc[10, "weeds_pmi"] == pytest.approx(weeds_pmi)
    assert s.loc[10, "lin"] == pytest.approx(lin)
    assert s.loc[10, "binc"] == pytest.approx(math.sqrt(lin * weeds_pmi))

    # item 11, crossed: R3 read as (a,b):2, (c,d):5, (b,a):7 in the premise's orientation
    assert s.loc[11, "weeds_prec"] == pytest.approx(1.0)  # not swapped it would be 3/4
    assert s.loc[11, "cl_xy"] == pytest.approx(3 / 4)
    assert s.loc[11, "cl_yx"] == pytest.approx(3 / 14)
    assert s.loc[11, "inv_cl"] == pytest.approx(math.sqrt(3 / 4 * (1 - 3 / 14)))
    # w_R3(b,a) = ln(2·62/(14·12)) < 0 -> 0; w_R3(d,c) = ln(5·62/(14·5)); w_R3(a,b) = ln(7·62/(14·12))
    w3_dc, w3_ab = ln(310 / 70), ln(434 / 168)
    assert s.loc[11, "weeds_pmi"] == pytest.approx(w1_cd / (w1_ab + w1_cd))
    assert s.loc[11, "lin"] == pytest.approx((w1_cd + w3_dc) / (w1_ab + w1_cd + w3_dc + w3_ab))

    # item 12 = item 10 (both sides reversed)
    pd.testing.assert_series_equal(s.loc[12], s.loc[10], check_names=False)
    # not covered
    assert s.loc[[13, 14]].isna().all().all()


def test_typed_scores_and_sherlock(marts_target: Target) -> None:
    items = pd.DataFrame(
        [
            item(LEAD, HEAD, ("person", "company")),  # T11 => T21 (exact slot types)
            item(rev(LEAD), rev(HEAD), ("company", "person")),  # same item written object-first
            item(LEAD, HEAD, ("thing", "leader")),  # premise T12; hypothesis has no such type -> NaN
            item(LEAD, HEAD, None),  # no types -> NaN
            item(LEAD, HEAD, ("PERSON", "/business/company")),  # normalised type names: as item 0
        ]
    )
    s = compute_scores(items, marts_target, "typed")
    ln = math.log
    assert s.loc[0, "weeds_prec"] == pytest.approx(1.0)  # untyped: 3/4
    assert s.loc[0, "cl_xy"] == pytest.approx(2 / 3)
    assert s.loc[0, "inv_cl"] == pytest.approx(math.sqrt(2 / 3 * (1 - 2 / 4)))
    # typed PMI: c(T,f) from the typed edges, c(f) and N untyped
    wt1, wt2 = ln(3 * 62 / (3 * 12)), ln(2 * 62 / (4 * 12))
    assert s.loc[0, "weeds_pmi"] == pytest.approx(1.0)
    assert s.loc[0, "lin"] == pytest.approx((wt1 + wt2) / (wt1 + 2 * wt2))
    # Sherlock: |A|=1, |B|=2, |A∩B|=1, |E|²=49 -> Relv=24.5, σ=2·ln 24.5, esr=2/2
    assert s.loc[0, "sherlock_esr"] == pytest.approx(24.5 * 2 * ln(24.5) * 1.0)
    pd.testing.assert_series_equal(s.loc[1], s.loc[0], check_names=False)
    pd.testing.assert_series_equal(s.loc[4], s.loc[0], check_names=False)
    assert s.loc[[2, 3]].isna().all().all()


def test_sherlock_with_partial_overlap(marts_target: Target) -> None:
    """T12 (thing/thing, 2 pairs) => T21 (matched through its type signature {person, leader})."""
    s = compute_scores(pd.DataFrame([item(LEAD, HEAD, ("thing", "thing"))]), marts_target, "typed")
    assert s["weeds_prec"].isna().all()  # the hypothesis has no thing/thing typed relation
    items = pd.DataFrame(
        [
            {
                **item(LEAD, HEAD),
                "premise_type_a": "thing",
                "premise_type_b": "thing",
                "hypothesis_type_a": "leader",
                "hypothesis_type_b": "company",
            }
        ]
    )
    s = compute_scores(items, marts_target, "typed")
    p, p_b, relv = 0.5, 2 / 49, 1 * 49 / (2 * 2)
    sigma = p * 2 * 2 * (p * math.log(relv) + (1 - p) * math.log((1 - p) / (1 - p_b)))
    esr = 2 / (2 * 1)
    assert s.loc[0, "sherlock_esr"] == pytest.approx(relv * sigma * esr)
    assert s.loc[0, "weeds_prec"] == pytest.approx(3 / 4)


def test_registered_baselines_share_one_query(marts_target: Target) -> None:
    items = pd.DataFrame([item(LEAD, HEAD, ("person", "company")), item(LEAD, "x___y___nsubj")])
    ctx = Context(target=marts_target)
    weeds = REGISTRY["WeedsPrec (untyped)"].score(items, ctx)
    assert weeds.iloc[0] == pytest.approx(0.75) and math.isnan(weeds.iloc[1])
    assert REGISTRY["WeedsPrec (typed)"].score(items, ctx).iloc[0] == pytest.approx(1.0)
    assert REGISTRY["Sherlock+ESR"].tunable
    assert len([k for k in ctx.cache if k[0] == "distributional"]) == 2


def test_missing_marts_give_a_clear_error(fresh_target: Target) -> None:
    with pytest.raises(RuntimeError, match="warehouse.relations is missing"):
        compute_scores(pd.DataFrame([item(LEAD, HEAD)]), fresh_target, "untyped")


def test_sql_equals_the_dense_numpy_reference_on_a_synthetic_graph(db_target: Target) -> None:
    """benchmarks/bench_baselines.py at toy size: SQL and the dense approach agree (asserted there), in a
    scratch database of the Target's server."""
    from benchmarks.bench_baselines import bench_sql_vs_dense

    result = bench_sql_vs_dense(
        db_target, n_relations=200, cluster_size=10, pool=40, edges_per_relation=10, n_items=60
    )
    assert result["graph"]["n_edges"] > 1000 and result["n_crossed"] > 0
    assert max(result["max_abs_difference"].values()) <= 1e-9
    assert result["mean_weeds_prec"] > 0.1  # the items really overlap
