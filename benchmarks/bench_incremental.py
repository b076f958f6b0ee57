"""Benchmark: an incremental build against a full build of the same batches (issue 22's incremental row).

On a warehouse whose graph was just built in full from a synthetic TEG (benchmarks.synthetic_teg), a batch
of `share` × the graph's instances is added (same seed and entity count: the graph's entities, types and
relations, as a corpus loaded in pieces), then:

1. `dbt run` — incremental: the models that keep state are updated from the new batch only;
2. the marts are copied aside (schema `incremental_check`), `dbt run --full-refresh` rebuilds everything;
3. the two sets of marts are compared row for row (floats to 1e-9), in SQL.

Beside step 1, for every table the incremental build updates (the incremental models): the rows its
publish rewrote (inserted and deleted, from Postgres' table statistics) against the rows that had to
change (rows after the build that were not there before, with every column equal, and the reverse:
`except all` against a copy taken before the build, untimed). Their ratio is the work an exact
build at a finer grain could save.

With --repeat N, steps 1-3 run N times, each on a copy of the database as it was with the batch added
(one run's time varies by ±15 % on a shared machine); the pair with the median time ratio is reported.

Both runs are profiled like the full build (benchmarks.profile_candidates: time with the load average,
Postgres CPU seconds, peak memory, per model). :func:`bench_incremental` returns the figures for
bench_candidates' JSON; `python -m benchmarks.bench_incremental --instances N` runs it on its own
database.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from benchmarks.profile_candidates import MARTS_SELECTOR, median_run, profile_dbt_run, repeat_option
from benchmarks.reports import write_report
from benchmarks.synthetic_teg import GeneratorConfig, generate, shape_options
from warehouse.command_line import CONTEXT, OUTPUT_FOLDER, json_object, run, target_options, version_option
from warehouse.scratch import database_snapshot, scratch_database
from warehouse.settings import out_folder
from warehouse.target import Target

if TYPE_CHECKING:
    import psycopg

CHECK_SCHEMA = "incremental_check"
PREVIOUS_SCHEMA = "incremental_previous"
# mart -> (key columns, float columns); every other column is compared exactly
MART_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "relations": (("rel_id",), ()),
    "entities": (("entity_id",), ()),
    "typed_relations": (("typed_rel_id",), ()),
    "untyped_edges": (("rel_id", "arg1_entity_id", "arg2_entity_id"), ()),
    "teg_edges": (("typed_rel_id", "arg1_entity_id", "arg2_entity_id"), ()),
    "inference_candidates": (
        ("premise_typed_rel_id", "hypothesis_typed_rel_id", "alignment"),
        ("relv", "sigma", "esr", "score"),
    ),
}
REL_TOL = 1e-9


def increment_config(base: GeneratorConfig, share: float) -> GeneratorConfig:
    """A batch of share × the base graph's instances over the base graph's entities, types and relations
    (same seed and entity count; the instances drawn differ with their number)."""
    return replace(base, n_instances=max(1, round(base.n_instances * share)), n_entities=base.entities)


def copy_marts(target: Target, schema: str) -> None:
    """The marts of the Target's build copied into `schema` (replaced)."""
    with target.connect(autocommit=True) as conn:
        conn.execute(f"drop schema if exists {schema} cascade")
        conn.execute(f"create schema {schema}")
        for mart in MART_KEYS:
            live = f"{target.marts_schema}.{mart}"
            conn.execute(f"create unlogged table {schema}.{mart} as select * from {live}")


def mart_differences(target: Target, expected: str, actual: str) -> dict[str, int]:
    """Rows that differ per mart between two schemas: a key in one only, or a column that differs
    (floats beyond a relative 1e-9)."""
    out: dict[str, int] = {}
    with target.connect() as conn:
        for mart, (keys, floats) in MART_KEYS.items():
            columns = [
                row[0]
                for row in conn.execute(
                    "select column_name from information_schema.columns where table_schema = %s "
                    "and table_name = %s order by ordinal_position",
                    (expected, mart),
                )
            ]
            join = " and ".join(f"e.{k} = a.{k}" for k in keys)
            mismatch = [f"e.{keys[0]} is null", f"a.{keys[0]} is null"]
            for column in columns:
                if column in keys:
                    continue
                if column in floats:
                    scale = f"greatest(abs(e.{column}), abs(a.{column}), 1)"
                    mismatch.append(f"abs(e.{column} - a.{column}) > {REL_TOL} * {scale}")
                else:
                    mismatch.append(f"e.{column} is distinct from a.{column}")
            query = (
                f"select count(*) from {expected}.{mart} e full join {actual}.{mart} a on {join} "
                f"where {' or '.join(mismatch)}"
            )
            out[mart] = conn.execute(query).fetchone()[0]
    return out


def bench_incremental(
    target: Target, base: GeneratorConfig, share: float, dbt_vars: dict, target_dir: Path, repeat: int = 1
) -> dict:
    """Add share × the graph to a warehouse built in full from `base`, build incrementally, rebuild in
    full, compare. Returns both builds' profiles, their time and CPU ratios and the comparison. With
    `repeat` > 1 the database is copied once the batch is added and the pair of builds is run `repeat`
    times on that state: the pair with the median time ratio is reported, with every pair's ratios."""
    increment = increment_config(base, share)
    summary = generate(target, increment, progress=False)
    pairs = []
    # a copy to start each further pair from (only when there is one)
    with database_snapshot(target) if repeat > 1 else nullcontext() as restore:
        for run_number in range(1, repeat + 1):
            if run_number > 1:
                restore()
            pairs.append(incremental_vs_full(target, dbt_vars, target_dir))
    reported = median_run(pairs, "time_ratio")
    return {
        "share": share,
        "added_instances": increment.n_instances,
        "added_batch": summary.as_dict(),
        **reported,
        "runs": [{key: pair[key] for key in ("time_ratio", "cpu_ratio", "equal")} for pair in pairs],
        "equal": all(pair["equal"] for pair in pairs),
    }


def state_tables(target_dir: Path) -> list[str]:
    """The tables an incremental build updates from a delta: the incremental models of the last build
    whose manifest is in `target_dir`."""
    manifest = json.loads((target_dir / "manifest.json").read_text())
    return sorted(
        node["alias"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and node["config"].get("materialized") == "incremental"
    )


def table_writes(conn: psycopg.Connection, schema: str, tables: list[str]) -> dict[str, tuple[int, int]]:
    """(rows inserted, rows deleted) so far of each table, from Postgres' statistics."""
    # a backend sends its counters when it exits, after its client has gone: wait for dbt's (at most 10 s)
    for _ in range(100):
        (others,) = conn.execute(
            "select count(*) from pg_stat_activity where datname = current_database()"
            " and pid <> pg_backend_pid() and backend_type = 'client backend'"
        ).fetchone()
        if not others:
            break
        time.sleep(0.1)
    conn.execute("select pg_stat_clear_snapshot()")
    rows = conn.execute(
        "select relname, n_tup_ins, n_tup_del from pg_stat_user_tables"
        " where schemaname = %s and relname = any(%s)",
        (schema, tables),
    ).fetchall()
    return {name: (inserted, deleted) for name, inserted, deleted in rows}


def keep_previous_tables(target: Target, tables: list[str]) -> dict[str, tuple[int, int]]:
    """Copies of the live state tables (schema incremental_previous), and their write counters."""
    schema = target.marts_schema
    with target.connect(autocommit=True) as conn:
        conn.execute(f"drop schema if exists {PREVIOUS_SCHEMA} cascade")
        conn.execute(f"create schema {PREVIOUS_SCHEMA}")
        for table in tables:
            conn.execute(f"create unlogged table {PREVIOUS_SCHEMA}.{table} as select * from {schema}.{table}")
        return table_writes(conn, schema, tables)


def rewrites(target: Target, tables: list[str], writes_before: dict[str, tuple[int, int]]) -> dict[str, dict]:
    """Per state table: its rows after the build, the rows the build inserted and deleted, and the rows
    that had to change (`except all` both ways against the copies). Only after an incremental build: a
    full build replaces the tables, and with them their counters."""
    schema = target.marts_schema
    out: dict[str, dict] = {}
    with target.connect(autocommit=True) as conn:
        conn.execute("set work_mem = '1GB'")  # the set operations of the big tables in memory
        writes_after = table_writes(conn, schema, tables)
        for table in tables:
            now, previous = f"{schema}.{table}", f"{PREVIOUS_SCHEMA}.{table}"
            (rows,) = conn.execute(f"select count(*) from {now}").fetchone()
            (added,) = conn.execute(
                f"select count(*) from (table {now} except all table {previous}) as added"
            ).fetchone()
            (removed,) = conn.execute(
                f"select count(*) from (table {previous} except all table {now}) as removed"
            ).fetchone()
            inserted, deleted = (
                after - before
                for after, before in zip(writes_after[table], writes_before[table], strict=True)
            )
            out[table] = {
                "rows": rows,
                "inserted": inserted,
                "deleted": deleted,
                "changed_in": added,
                "changed_out": removed,
            }
    return out


def incremental_vs_full(target: Target, dbt_vars: dict, target_dir: Path) -> dict:
    """An incremental build of the batches added since the last build (with what it rewrote against
    what had to change), then `--full-refresh`; marts compared. Both builds use dbt's target folder
    `target_dir` (a user's builds reuse its parse)."""
    select = ["run", "--select", *MARTS_SELECTOR]
    tables = state_tables(target_dir)
    writes_before = keep_previous_tables(target, tables)
    incremental = profile_dbt_run(target, select, dbt_vars, target_dir)
    with target.connect() as conn:
        plan = conn.execute(
            f"select is_incremental, reason from {target.marts_schema}.int_build_plan"
        ).fetchone()
    # a build that fell back to a full one replaced the tables: nothing to compare
    rewritten = rewrites(target, tables, writes_before) if plan[0] else None
    with target.connect(autocommit=True) as conn:
        conn.execute(f"drop schema {PREVIOUS_SCHEMA} cascade")
    copy_marts(target, CHECK_SCHEMA)
    full = profile_dbt_run(target, [*select, "--full-refresh"], dbt_vars, target_dir)
    differences = mart_differences(target, target.marts_schema, CHECK_SCHEMA)
    with target.connect(autocommit=True) as conn:
        conn.execute(f"drop schema {CHECK_SCHEMA} cascade")
    return {
        "plan": {"is_incremental": plan[0], "reason": plan[1]},
        "incremental": incremental,
        "rewrites": rewritten,
        "full_refresh": full,
        "time_ratio": round(incremental["wall_s"] / full["wall_s"], 3),
        "cpu_ratio": round(incremental["backend_cpu_s"] / max(full["backend_cpu_s"], 1e-9), 3),
        "differences": differences,
        "equal": not any(differences.values()),
    }


def markdown(row: dict) -> str:
    inc, full = row["incremental"], row["full_refresh"]
    inc_load, full_load = inc["load_average"], full["load_average"]
    return (
        f"Incremental build after adding {row['added_instances']:,} instances ({row['share']:.0%}): "
        f"{inc['wall_s']:.1f} s (load average {inc_load['start']}–{inc_load['max_1min']}, "
        f"Postgres CPU {inc['backend_cpu_s']:.0f} s) vs `--full-refresh` {full['wall_s']:.1f} s (load "
        f"average {full_load['start']}–{full_load['max_1min']}, Postgres CPU "
        f"{full['backend_cpu_s']:.0f} s): {row['time_ratio']:.0%} of the time, {row['cpu_ratio']:.0%} of the "
        f"CPU; marts {'equal' if row['equal'] else 'DIFFERENT: ' + json.dumps(row['differences'])}"
        f" (plan: {row['plan']['reason']})." + repeats(row) + "\n" + rewrite_table(row)
    )


REWRITE_COLUMNS = ("rows", "inserted", "changed_in", "deleted", "changed_out")


def rewrite_table(row: dict) -> str:
    """What the incremental build rewrote in each state table against what had to change, largest first."""
    tables = row.get("rewrites")
    if not tables:
        return ""
    total = {key: sum(t[key] for t in tables.values()) for key in REWRITE_COLUMNS}
    lines = [
        "",
        "| state table | rows | inserted | needed: new or changed | deleted | needed: gone or changed |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, counts in [*sorted(tables.items(), key=lambda item: -item[1]["inserted"]), ("all", total)]:
        lines.append(f"| {name} | " + " | ".join(f"{counts[key]:,}" for key in REWRITE_COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def repeats(row: dict) -> str:
    """The ratios of every pair of builds, when the pair was run more than once (the median one is shown)."""
    if len(row.get("runs", [])) < 2:
        return ""
    ratios = ", ".join(f"{run['time_ratio']:.0%} / {run['cpu_ratio']:.0%}" for run in row["runs"])
    return (
        f" Time / CPU ratio of each of the {len(row['runs'])} pairs of builds: {ratios} (the median shown)."
    )


@click.command(context_settings=CONTEXT, help=__doc__.split("\n")[0])
@version_option
@click.option(
    "--instances", type=int, default=5_000_000, show_default=True, help="Instances of the base graph."
)
@click.option("--share", type=float, default=0.01, show_default=True, help="Instances added, as a share.")
@repeat_option("the pair of builds (each on a copy of the same state)")
@shape_options
@click.option("--vars", "dbt_vars", default="{}", callback=json_object, help="dbt vars as JSON.")
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    default=lambda: out_folder() / "bench",
    show_default="out/bench",
)
@target_options()
def cli(target: Target, instances: int, share: float, repeat: int, dbt_vars: dict, out: Path, **shape) -> int:
    # the scratch database is made on the Target's server (DATABASE_URL's, else the embedded one)
    base = GeneratorConfig(
        n_instances=instances,
        n_relations=shape["relations"],
        seed=shape["seed"],
        relation_zipf=shape["relation_zipf"],
        entity_zipf=shape["entity_zipf"],
        global_share=shape["global_share"],
    )
    with (
        scratch_database(target, f"sherliic_bench_incremental_{instances}") as bench,
        tempfile.TemporaryDirectory(prefix="bench_incremental_") as tmp,
    ):
        generate(bench, base, progress=False)
        first = profile_dbt_run(bench, ["run", "--select", *MARTS_SELECTOR], dbt_vars, Path(tmp))
        row = {
            "instances": instances,
            "first_build": first,
            **bench_incremental(bench, base, share, dbt_vars, Path(tmp), repeat),
        }
    text = markdown(row)
    write_report(out, "incremental", {"cpus": os.cpu_count(), **row}, text)
    print(text)
    return 0 if row["equal"] and row["plan"]["is_incremental"] else 1


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="python -m benchmarks.bench_incremental")


if __name__ == "__main__":
    sys.exit(main())
