"""What the commands of demo/ and benchmarks/ hand to their child processes and benchmark runs: a Target's
environment (the same Target again in the child) and scratch databases (created, then dropped)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from warehouse.engine import SparkSettings
from warehouse.scratch import scratch_database
from warehouse.target import Target


def test_a_targets_environment_makes_the_same_target_again(tmp_path: Path) -> None:
    spark = SparkSettings(catalog_dir=tmp_path / "catalog", master="local[1]", shuffle_partitions="3")
    target = Target(engine="spark", pgdata=tmp_path / "pgdata", spark=spark, build="trial")
    inherited = {"PATH": "/bin", "DATABASE_URL": "postgresql://u@h/other", "SHERLIIC_SPARK_MASTER": "x"}
    env = target.environment(inherited)
    assert env["PATH"] == "/bin"  # the rest of the environment is kept
    assert "DATABASE_URL" not in env  # the Target has none: the child must not use the parent's
    assert Target.from_environment(env) == target
    on_postgres = replace(target.on_postgres(), database_url="postgresql://u@h/db", build=None)
    env = on_postgres.environment(inherited)
    assert "SHERLIIC_BUILD" not in env
    assert Target.from_environment(env) == on_postgres


def test_a_scratch_database_is_created_empty_and_dropped(db_target: Target) -> None:
    with scratch_database(db_target, "sherliic_test_scratch") as scratch:
        assert scratch.engine == "postgres" and scratch.database_url != db_target.database_url
        with scratch.connect() as conn:
            assert conn.execute("select current_database()").fetchone()[0] == "sherliic_test_scratch"
            assert conn.execute("select count(*) from raw.load_batches").fetchone()[0] == 0
    with db_target.connect() as conn:
        left = conn.execute("select 1 from pg_database where datname = 'sherliic_test_scratch'").fetchall()
    assert left == []
