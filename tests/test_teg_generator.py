"""The synthetic TEG generator: seeded, one idempotent load batch, canonical paths, planted rules."""

from __future__ import annotations

import numpy as np

from benchmarks.synthetic_teg import GeneratorConfig, TegGenerator, generate, type_inventory
from deppath.paths import is_reversed, rejection_rule
from warehouse.target import Target


def _arrays(config: GeneratorConfig) -> list[np.ndarray]:
    return [np.concatenate(parts) for parts in zip(*TegGenerator(config).chunks(), strict=True)]


def test_seeded_and_streamed_in_chunks():
    config = GeneratorConfig(n_instances=2500, n_relations=200, n_entities=400, seed=7, chunk_size=1000)
    rels, a1, a2 = _arrays(config)
    assert len(rels) == 2500
    assert (a1 != a2).all()
    again = _arrays(config)
    assert all((x == y).all() for x, y in zip((rels, a1, a2), again, strict=True))
    other = _arrays(GeneratorConfig(n_instances=2500, n_relations=200, n_entities=400, seed=8))
    assert not (other[0] == rels).all()
    chunks = list(TegGenerator(config).chunks())
    assert [len(c[0]) for c in chunks] == [1000, 1000, 500]


def test_relation_sizes_are_zipf_and_paths_pass_the_filters():
    config = GeneratorConfig(n_instances=50_000, n_relations=1000, n_entities=5000, seed=1)
    gen = TegGenerator(config)
    rels = np.concatenate([c[0] for c in gen.chunks()])
    sizes = np.bincount(rels, minlength=config.n_relations)
    # Rank 1 is an order of magnitude bigger than rank 100 (Zipf, exponent ~1.1).
    assert sizes[0] > 5 * sizes[99] > 0
    for path in gen.paths[:50]:
        assert rejection_rule(path) is None, path
        assert not is_reversed(path)
    types = type_inventory()
    assert 30 <= len(types) <= 50
    per_entity = [len(t) for t in gen.entity_types]
    assert max(per_entity) >= 3 and 1.2 < np.mean(per_entity) < 4
    assert 0 < per_entity.count(0) < len(per_entity) * 0.1  # a few untyped entities


def test_load_is_one_idempotent_batch_with_planted_rules(fresh_target: Target):
    # Flatter relation sizes than the default so the planted premises (ranks ≥ 20) have pairs.
    config = GeneratorConfig(n_instances=3000, n_relations=300, n_entities=500, seed=2, relation_zipf=1.0)
    summary = generate(fresh_target, config, progress=False)
    assert summary.n_instances == 3000 and summary.n_planted_straight + summary.n_planted_crossed == 3
    assert summary.hub_tail_sum_n2 >= summary.n_entity_pairs
    again = generate(fresh_target, config, progress=False)
    assert again.skipped and again.batch_id == summary.batch_id
    with fresh_target.connect() as conn:
        batches = conn.execute(
            "select batch_id, status, source_format, kind, n_instances from raw.load_batches"
        ).fetchall()
        assert batches == [(summary.batch_id, "loaded", "synthetic", "corpus", 3000)]
        n, distinct, pairs = conn.execute(
            "select count(*), count(distinct (path, arg1_entity_id, arg2_entity_id)), "
            "count(distinct (arg1_entity_id, arg2_entity_id)) from raw.relation_instances"
        ).fetchone()
        assert (n, distinct, pairs) == (3000, summary.n_distinct_relation_pairs, summary.n_entity_pairs)
        sum_n2 = conn.execute(
            "select sum(n * n) from (select count(distinct path) as n from raw.relation_instances "
            "group by arg1_entity_id, arg2_entity_id) t"
        ).fetchone()[0]
        assert sum_n2 == summary.hub_tail_sum_n2
        # Every instance's entities are in raw.entities; types come from the inventory.
        missing = conn.execute(
            "select count(*) from raw.relation_instances i left join raw.entities e "
            "on e.entity_id = i.arg1_entity_id where e.entity_id is null"
        ).fetchone()[0]
        assert missing == 0
        type_names = {r[0] for r in conn.execute("select distinct type_name from raw.entity_types")}
        assert type_names <= set(type_inventory())
    gen = TegGenerator(config)
    planted = np.flatnonzero(gen.plant_target >= 0)
    assert len(planted) == 3
    # A planted premise shares (straight) or mirrors (crossed) many of its pairs with its hypothesis.
    with fresh_target.connect() as conn:
        for a in planted.tolist():
            b = int(gen.plant_target[a])
            left, right = ("arg2", "arg1") if gen.plant_crossed[a] else ("arg1", "arg2")
            mirror = f"i.arg1_entity_id = j.{left}_entity_id and i.arg2_entity_id = j.{right}_entity_id"
            shared = conn.execute(
                f"select count(distinct (i.arg1_entity_id, i.arg2_entity_id)) from raw.relation_instances i "
                f"join raw.relation_instances j on {mirror} where i.path = %s and j.path = %s",
                (gen.paths[a], gen.paths[b]),
            ).fetchone()[0]
            own = conn.execute(
                "select count(distinct (arg1_entity_id, arg2_entity_id)) from raw.relation_instances "
                "where path = %s",
                (gen.paths[a],),
            ).fetchone()[0]
            assert own > 0 and shared >= 0.3 * own
