"""Incremental builds (docs/design.md §2, dbt_project/macros/incremental.sql): a build that only adds
batches updates the previous build's tables from the new batches, and its marts equal those of
`--full-refresh` row for row (scores to 1e-9); removing a batch, changing the vars the stored counts depend
on, types for entities already in the graph or a partial last build make the build full, saying why in
one line; a failed incremental build publishes nothing.

Real Postgres, real dbt, small synthetic graphs (benchmarks.synthetic_teg): batches with the base graph's
seed and entity count share its entities, types and relations, as a corpus loaded in pieces does.
"""

from __future__ import annotations

import math
import shutil
from collections import Counter
from pathlib import Path

import pytest
from psycopg.rows import dict_row

from benchmarks.bench_incremental import keep_previous_tables, rewrite_table, rewrites, state_tables
from benchmarks.synthetic_teg import GeneratorConfig, generate
from builds.records import list_builds
from builds.runner import run_dbt
from extract.batches.store import open_batch_store
from warehouse.settings import DBT_PROJECT_DIR
from warehouse.target import Target

pytestmark = pytest.mark.slow  # every test builds the graph several times with dbt (~1 min each)

# Flatter than the full-scale default and low thresholds: a few thousand instances give typed relations,
# overlaps and InfCands of both alignments, and added batches change slot type rankings.
SHAPE = {"n_relations": 300, "n_entities": 600, "relation_zipf": 1.1, "entity_zipf": 1.0, "global_share": 0.5}
BASE = GeneratorConfig(n_instances=6000, seed=3, **SHAPE)
ADDED = [GeneratorConfig(n_instances=n, seed=3, **SHAPE) for n in (700, 1100, 1500)]
VARS = {"r_min": 3, "min_relv": 10, "min_sigma": 2, "min_esr": 0.5}
TEG = ["--select", "tag:teg"]
# every mart of the graph, ordered by its key; floats compared to 1e-9
MARTS = {
    "relations": "rel_id",
    "entities": "entity_id",
    "typed_relations": "typed_rel_id",
    "untyped_edges": "rel_id, arg1_entity_id, arg2_entity_id",
    "teg_edges": "typed_rel_id, arg1_entity_id, arg2_entity_id",
    "inference_candidates": "premise_typed_rel_id, hypothesis_typed_rel_id, alignment",
    "relation_instances": "instance_id",
    "teg_corpora": "corpus_name",
}
VOLATILE = {"built_at"}  # set by each build
# the models that keep state (materialized incremental): the others are built in full in every build
STATE_TABLES = {
    "int_entity_keys",
    "int_relation_keys",
    "int_relation_pairs",
    "int_entity_types",
    "int_slot_entities",
    "int_slot_type_counts",
    "int_slot_entity_types",
    "int_relation_pair_typings",
    "int_slot_entity_classes",
    "int_typing_sizes",
    "int_type_signatures",
    "int_shared_entity_pairs",
    "int_relation_overlaps",
    "int_overlap_classes",
    "int_overlap_typing_sizes",
    "int_typed_overlaps",
    "teg_edges",
    "untyped_edges",
    "entities",
}


def build(
    target: Target, tmp_path: Path, *extra: str, dbt_vars: dict | None = None, project: Path | None = None
) -> int:
    args = ["run", *TEG, *extra, "--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path)]
    kwargs = {"project_dir": project} if project else {}
    return run_dbt(target, args, {**VARS, **(dbt_vars or {})}, check=False, **kwargs)


def marts(target: Target) -> dict[str, list[dict]]:
    with target.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
        out = {}
        for mart, key in MARTS.items():
            cur.execute(f"select * from {target.marts_schema}.{mart} order by {key}")
            out[mart] = [{k: v for k, v in row.items() if k not in VOLATILE} for row in cur.fetchall()]
        return out


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def differences(expected: dict[str, list[dict]], actual: dict[str, list[dict]]) -> list[str]:
    problems = []
    for mart, rows in expected.items():
        other = actual[mart]
        if len(rows) != len(other):
            problems.append(f"{mart}: {len(rows)} rows after --full-refresh, {len(other)} incremental")
            continue
        for want, got in zip(rows, other, strict=True):
            if want.keys() != got.keys() or not all(same(want[k], got[k]) for k in want):
                problems.append(f"{mart}: full refresh {want} != incremental {got}")
                break
    return problems


def plan(target: Target) -> dict:
    with target.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            f"select is_incremental, reason, n_new_batches from {target.marts_schema}.int_build_plan"
        ).fetchone()


def count(target: Target, table: str) -> int:
    with target.connect() as conn:
        return conn.execute(f"select count(*) from {target.marts_schema}.{table}").fetchone()[0]


def add_batch(target: Target, config: GeneratorConfig) -> int:
    return generate(target, config, progress=False).batch_id


@pytest.fixture(scope="module")
def base_graph(make_target, tmp_path_factory) -> Target:
    """The base graph generated and built in full once for the module (a build costs ~25 s)."""
    target = make_target()
    add_batch(target, BASE)
    assert build(target, tmp_path_factory.mktemp("base")) == 0
    return target


@pytest.fixture()
def target(fresh_target_of, base_graph: Target) -> Target:
    """A copy of the built base graph's database, this test's own (dropped when the test ends)."""
    return fresh_target_of(template=base_graph)


def kept_slot_types(target: Target) -> dict[int, dict]:
    """Per relation, its kept slot types: {(slot, type_name): count_rank}."""
    with target.connect() as conn:
        rows = conn.execute(
            f"select rel_id, slot, type_name, count_rank from {target.marts_schema}.int_slot_types_ranked"
        ).fetchall()
    kept: dict[int, dict] = {}
    for rel_id, slot, type_name, count_rank in rows:
        kept.setdefault(rel_id, {})[(slot, type_name)] = count_rank
    return kept


def retyped(target: Target) -> set[int]:
    with target.connect() as conn:
        query = f"select rel_id from {target.marts_schema}.int_retyped_relations"
        return {row[0] for row in conn.execute(query)}


def assert_incremental_equals_full_refresh(target: Target, tmp_path: Path, capfd) -> None:
    """Build incrementally, then from scratch: same marts, row for row."""
    assert build(target, tmp_path) == 0
    assert "incremental build: 1 new batch(es) since the last build" in capfd.readouterr().out
    assert plan(target)["is_incremental"]
    incremental = marts(target)
    assert build(target, tmp_path, "--full-refresh") == 0
    assert "full build: --full-refresh" in capfd.readouterr().out
    problems = differences(marts(target), incremental)
    assert problems == [], "\n".join(problems[:10])


def test_incremental_builds_equal_full_refresh(target: Target, tmp_path: Path, capfd) -> None:
    (first_build,) = list_builds(target)
    assert first_build.build_plan == "full build: no previous build in schema warehouse"
    first = marts(target)
    assert len(first["inference_candidates"]) > 50
    assert {row["alignment"] for row in first["inference_candidates"]} == {"straight", "crossed"}
    n_ranked = count(target, "int_retyped_relations")  # a full build: every ranked relation
    added, reordered = [], set()
    for config in ADDED:  # one, two and three added batches
        added.append(add_batch(target, config))
        kept_before = kept_slot_types(target)
        assert build(target, tmp_path) == 0
        out = capfd.readouterr().out
        assert "incremental build: 1 new batch(es) since the last build" in out
        # both paths are exercised: some relations' slot types changed (recomputed from scratch), most
        # relations were updated from their new pairs
        assert 0 < count(target, "int_retyped_relations") < n_ranked
        # kept types whose count order alone changed are not retyped (masks follow the types' names)
        kept_after = kept_slot_types(target)
        changed_order = {
            rel_id
            for rel_id, types in kept_after.items()
            if rel_id in kept_before
            and types.keys() == kept_before[rel_id].keys()
            and types != kept_before[rel_id]
        }
        assert not changed_order & retyped(target)
        reordered |= changed_order
        incremental = marts(target)
        assert incremental != first
        assert build(target, tmp_path, "--full-refresh") == 0
        assert "full build: --full-refresh" in capfd.readouterr().out
        problems = differences(marts(target), incremental)
        assert problems == [], "\n".join(problems[:10])
        # continue from the full refresh's state; the next round adds one batch again
    assert reordered, "no added batch changed a relation's count order alone"
    # a removed batch: the next build starts from scratch, saying why in one line
    with open_batch_store(target) as store:
        store.remove(batch_ids=[added[1]])
    assert build(target, tmp_path) == 0
    assert f"full build: batch {added[1]} was removed since the last build" in capfd.readouterr().out
    after_removal = marts(target)
    assert build(target, tmp_path, "--full-refresh") == 0
    assert differences(marts(target), after_removal) == []


def test_incremental_builds_in_a_row_keep_the_state_of_a_full_build(
    target: Target, tmp_path: Path, capfd
) -> None:
    """Three incremental builds one after the other, each starting from the state the previous one
    published: after each, every table that keeps state and every mart equals those of a full build of
    the same batches (a named build, built with --full-refresh beside it)."""
    full = target.with_build("full")
    for config in ADDED:
        add_batch(target, config)
        assert build(target, tmp_path) == 0
        assert "incremental build: 1 new batch(es) since the last build" in capfd.readouterr().out
        assert build(full, tmp_path / "full", "--full-refresh") == 0
        problems = differences(marts(full), marts(target))
        assert problems == [], "\n".join(problems[:10])
        state = state_tables(tmp_path / "target")
        assert set(state) == STATE_TABLES
        for table in state:
            assert table_rows(target, table) == table_rows(full, table), table


def test_changed_state_makes_the_build_full(target: Target, tmp_path: Path, capfd) -> None:
    add_batch(target, ADDED[0])
    # vars the stored counts depend on
    assert build(target, tmp_path, dbt_vars={"top_k_types": 4}) == 0
    assert (
        "full build: vars that the stored counts depend on changed since the last build"
        in capfd.readouterr().out
    )
    # a partial build (some incremental models only) is never continued
    assert build(target, tmp_path, dbt_vars={"top_k_types": 4}) == 0
    capfd.readouterr()
    # (a model without views over it: publishing drops the live tables the build replaces)
    partial = ["run", "--select", "int_entity_types", "--target-path", str(tmp_path / "partial")]
    assert run_dbt(target, partial, VARS, check=False) == 0
    assert "full build: a partial build rebuilds its models in full" in capfd.readouterr().out
    assert build(target, tmp_path) == 0
    assert "full build: the last build was partial" in capfd.readouterr().out
    # a batch typing entities already in the graph otherwise (another seed draws other types)
    add_batch(target, GeneratorConfig(n_instances=500, seed=4, **SHAPE))
    assert build(target, tmp_path) == 0
    assert "full build: a new batch adds types to entities already in the graph" in capfd.readouterr().out
    assert not plan(target)["is_incremental"]


def test_a_failed_incremental_build_publishes_nothing(target: Target, tmp_path: Path, capfd) -> None:
    before = marts(target)
    add_batch(target, ADDED[0])
    project = tmp_path / "dbt_project"
    shutil.copytree(DBT_PROJECT_DIR, project, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    (project / "models/marts/teg/zz_fails_after_inference_candidates.sql").write_text(
        "{{ config(tags=['teg']) }}\nselect 1 / 0 as boom from {{ ref('inference_candidates') }}\n"
    )
    capfd.readouterr()
    assert build(target, tmp_path, project=project) != 0
    assert "incremental build: 1 new batch(es)" in capfd.readouterr().out
    assert marts(target) == before  # the previous build, untouched
    with target.connect() as conn:
        staged = conn.execute(
            "select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace "
            "where n.nspname = 'warehouse__next'"
        ).fetchone()[0]
    assert staged > 0  # kept for `dbt retry`; the next build empties it
    # the next build continues from the untouched state
    assert_incremental_equals_full_refresh(target, tmp_path, capfd)


def test_a_named_build_keeps_its_own_state(target: Target, tmp_path: Path, capfd) -> None:
    """Each build (schema) continues from its own previous tables, and its record says how it was built."""
    trial = target.with_build("trial")
    add_batch(target, ADDED[0])
    # the default build's state is not the named build's: its first build is full
    assert build(trial, tmp_path / "trial") == 0
    assert "full build: no previous build in schema build_trial" in capfd.readouterr().out
    # and the named build did not move the default build's state on
    assert build(target, tmp_path) == 0
    assert "incremental build: 1 new batch(es) since the last build" in capfd.readouterr().out
    add_batch(target, ADDED[1])
    assert build(trial, tmp_path / "trial") == 0
    assert "incremental build: 1 new batch(es) since the last build" in capfd.readouterr().out
    assert plan(trial)["n_new_batches"] == 1
    incremental = marts(trial)
    assert build(trial, tmp_path / "trial", "--full-refresh") == 0
    problems = differences(marts(trial), incremental)
    assert problems == [], "\n".join(problems[:10])
    # a partial build records that it was built in full, at its start (it builds no int_build_plan)
    partial = ["run", "--select", "int_entity_types", "--target-path", str(tmp_path / "partial")]
    assert run_dbt(target, partial, VARS, check=False) == 0
    recorded = [(r.build_name, r.incremental, r.build_plan) for r in list_builds(target)]
    assert recorded == [
        ("default", False, "full build: no previous build in schema warehouse"),
        ("trial", False, "full build: no previous build in schema build_trial"),
        ("default", True, "incremental build: 1 new batch(es) since the last build"),
        ("trial", True, "incremental build: 1 new batch(es) since the last build"),
        ("trial", False, "full build: --full-refresh"),
        ("default", False, "full build: a partial build rebuilds its models in full"),
    ]


def table_rows(target: Target, table: str) -> Counter:
    """A table's rows as a multiset (arrays as tuples)."""
    with target.connect() as conn:
        rows = conn.execute(f"select * from {target.marts_schema}.{table}").fetchall()
    return Counter(tuple(tuple(v) if isinstance(v, list) else v for v in row) for row in rows)


def test_the_bench_counts_what_an_incremental_build_rewrote(target: Target, tmp_path: Path) -> None:
    """benchmarks.bench_incremental's table of rows an incremental build wrote against rows that had to
    change, checked against the tables before and after, counted here in Python."""
    with target.connect() as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "select table_name from information_schema.tables "
                "where table_schema = %s and table_type = 'BASE TABLE'",
                (target.marts_schema,),
            )
        ]
    before = {table: table_rows(target, table) for table in tables}
    writes_before = keep_previous_tables(target, tables)
    add_batch(target, ADDED[0])
    assert build(target, tmp_path) == 0
    assert plan(target)["is_incremental"]
    state = state_tables(tmp_path / "target")
    assert {"int_relation_pairs", "int_typed_overlaps", "teg_edges"} <= set(state) <= set(tables)
    assert "int_candidate_scores" not in state  # rebuilt in full: every score depends on |E|
    rewritten = rewrites(target, state, writes_before)
    assert set(rewritten) == set(state)
    for table in state:
        after, counts = table_rows(target, table), rewritten[table]
        assert counts["rows"] == after.total(), table
        assert counts["changed_in"] == (after - before[table]).total(), table
        assert counts["changed_out"] == (before[table] - after).total(), table
        # what the publish wrote: every needed change, and the rows grew by inserted - deleted
        assert counts["inserted"] >= counts["changed_in"] and counts["deleted"] >= counts["changed_out"], (
            table
        )
        assert counts["inserted"] - counts["deleted"] == after.total() - before[table].total(), table
    assert sum(counts["changed_in"] for counts in rewritten.values()) > 0
    lines = rewrite_table({"rewrites": rewritten}).strip().splitlines()
    assert [line.split(" | ")[0] for line in lines[2:]] == [
        f"| {t}" for t in sorted(state, key=lambda t: -rewritten[t]["inserted"])
    ] + ["| all"]
    assert lines[-1].startswith(f"| all | {sum(c['rows'] for c in rewritten.values()):,} |")
