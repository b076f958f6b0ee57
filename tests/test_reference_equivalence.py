"""The dbt marts equal the independent Python reference on generated graphs (docs/design.md §4–§5)."""

from __future__ import annotations

import pytest

from benchmarks.reference import Params, compare_with_marts, compute_from_db, read_marts
from benchmarks.synthetic_teg import GeneratorConfig, generate
from builds.runner import run_dbt
from warehouse.target import Target

# Flatter than the full-scale default: many mid-sized relations, so small graphs have many rules.
SHAPE = {"relation_zipf": 1.1, "entity_zipf": 1.0, "global_share": 0.5}
CASES = {
    # Low thresholds so that a few thousand instances give hundreds of candidates, both alignments.
    "low_thresholds": (
        GeneratorConfig(n_instances=5000, n_relations=300, n_entities=600, seed=3, **SHAPE),
        {"r_min": 3, "min_relv": 10, "min_sigma": 2, "min_esr": 0.5},
    ),
    # k = 2 (ties and ⊤ padding matter more), r_min = 2 and top-3 premises per hypothesis.
    "k2_top3": (
        GeneratorConfig(n_instances=8000, n_relations=300, n_entities=500, seed=4, **SHAPE),
        {"top_k_types": 2, "r_min": 2, "min_relv": 5, "min_sigma": 1, "min_esr": 0.5, "top_n_premises": 3},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_sql_marts_equal_reference(fresh_target: Target, case):
    config, dbt_vars = CASES[case]
    generate(fresh_target, config, progress=False)
    run_dbt(fresh_target, ["run", "--quiet"], dbt_vars)
    reference = compute_from_db(fresh_target, Params.from_vars(dbt_vars))
    sql_typed, sql_cands = read_marts(fresh_target)
    # The comparison is only meaningful if the example is not trivial.
    assert len(reference.typed_relations) > 500
    assert len(reference.inference_candidates) > 100
    assert set(reference.inference_candidates.alignment) == {"straight", "crossed"}
    assert len(sql_typed) == len(reference.typed_relations)
    assert len(sql_cands) == len(reference.inference_candidates)
    problems = compare_with_marts(reference, fresh_target)
    assert problems == [], "\n".join(problems[:30])
