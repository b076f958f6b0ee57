"""`sherliic-dbt builds`: list the recorded builds with their provenance, compare two, drop one."""

from __future__ import annotations

import json
from typing import Any

import click

from builds import records as build_records
from builds.dbt_vars import declared_vars
from warehouse.command_line import CONTEXT
from warehouse.errors import ConfigurationError
from warehouse.settings import DBT_PROJECT_DIR
from warehouse.target import Target

# the build's own name: two builds always differ in it
NOT_COMPARED_VARS = frozenset({"build"})


@click.command(context_settings=CONTEXT)
@click.option("--diff", nargs=2, metavar="A B", help="What differs between builds A and B (names or #ids).")
@click.option("--drop", metavar="NAME", help="Drop the named build: its schema, records and dbt folders.")
@click.option("--json", "as_json", is_flag=True, help="The records as JSON (every field).")
@click.pass_obj
def builds_command(target: Target, diff: tuple[str, str] | None, drop: str | None, as_json: bool) -> int:
    """The recorded builds (oldest first), each with its provenance: status, schema, how the graph was
    built (incremental or full, and why), corpora and their batches, type tables, vars that differ from
    the defaults, row counts, code and versions. `live` marks the build whose marts a schema holds.

    A build is named by its name (its live build, else its latest record) or by #id."""
    if target.engine != "postgres":
        raise ConfigurationError(
            "build records are kept for Postgres builds: on Spark models are built in place, unrecorded"
        )
    if drop is not None:

        def waiting(what: str) -> None:
            click.echo(f"sherliic-dbt builds: waiting for {what}; the drop follows when they end", err=True)

        removed = build_records.drop_build(target, drop, waiting=waiting)
        print(f"dropped build {drop}: schema {build_records.schema_of(drop)} and {removed} record(s)")
        return 0
    records = build_records.list_builds(target)
    if diff is not None:
        a, b = (build_records.find_build(records, reference) for reference in diff)
        lines = diff_builds(a, b)
        print(f"{a.label} -> {b.label}: " + (f"{len(lines)} difference(s)" if lines else "no difference"))
        for line in lines:
            print(f"  {line}")
        return 0
    if as_json:
        print(json.dumps([r.provenance() for r in records], indent=2, ensure_ascii=False, default=str))
        return 0
    if not records:
        print("no build recorded yet (sherliic-dbt run records one)")
        return 0
    defaults = declared_vars(DBT_PROJECT_DIR)
    live = _live(records)
    for record in records:
        print("\n".join(_lines(record, record.build_id in live, defaults)))
    return 0


def _live(records: list[build_records.BuildRecord]) -> set[int]:
    """Per schema, the latest record that published its graph: the build whose marts it holds (a later
    partial build, e.g. of the annotation marts, is live too: it published the marts it names)."""
    latest: dict[str, int] = {}
    partial: dict[str, list[int]] = {}
    for record in records:
        if record.published_at is None:
            continue
        if record.built_graph:
            latest[record.schema_name] = record.build_id
            partial[record.schema_name] = []
        else:
            partial.setdefault(record.schema_name, []).append(record.build_id)
    return set(latest.values()) | {build_id for ids in partial.values() for build_id in ids}


def _lines(record: build_records.BuildRecord, live: bool, defaults: dict) -> list[str]:
    took = ""
    if record.finished_at is not None:
        took = f", {(record.finished_at - record.started_at).total_seconds():.0f} s"
    status = record.status + (" (live)" if live else "")
    runner = "dbt" if record.runner == "dbt" else "sherliic-dbt"
    lines = [
        f"#{record.build_id} {record.build_name}: {status}, {record.started_at:%Y-%m-%d %H:%M:%S}{took}, "
        f"schema {record.schema_name}, {runner} {record.command}"
    ]
    if record.retry_of is not None:
        lines.append(f"    resumes: #{record.retry_of} (dbt retry)")
    if record.published_at is not None and not record.built_graph:
        lines.append(f"    partial: published {', '.join(record.published_models)}")
    if record.build_plan:
        lines.append(f"    plan: {record.build_plan}")
    if record.error:
        lines.append(f"    error: {record.error}")
    if record.staged_models:
        lines.append(f"    staged: {len(record.staged_models)} models kept for `dbt retry`")
    if record.hint:
        lines.append(f"    hint: {record.hint}")
    lines.append(f"    inputs: {describe_inputs(record)}")
    parsers = sorted({b["parser"] for c in record.corpora for b in c["batches"] if b.get("parser")})
    if parsers:  # which parser made the paths (recorded by the loads)
        lines.append(f"    parsed by: {', '.join(parsers)}")
    lines.append(f"    vars: {changed_vars(record, defaults)}")
    if record.row_counts:
        counts = ", ".join(f"{mart} {n:,}" for mart, n in sorted(record.row_counts.items()))
        lines.append(f"    rows: {counts}")
    versions = ", ".join(f"{tool} {v}" for tool, v in sorted(record.versions.items()))
    lines.append(f"    code: {code_label(record)}" + (f"; {versions}" if versions else ""))
    return lines


# -- comparing and describing ---------------------------------------------------------------------------


def diff_builds(a: build_records.BuildRecord, b: build_records.BuildRecord) -> list[str]:
    """What differs between two builds, one line each (vars, corpora and their batches, type tables,
    row counts, code, versions); empty when nothing does."""
    lines: list[str] = []
    for name in sorted((set(a.vars) | set(b.vars)) - NOT_COMPARED_VARS):
        if a.vars.get(name) != b.vars.get(name):
            lines.append(f"var {name}: {_json(a.vars.get(name))} -> {_json(b.vars.get(name))}")
    corpora_a = {c["corpus"]: c["batches"] for c in a.corpora}
    corpora_b = {c["corpus"]: c["batches"] for c in b.corpora}
    for corpus in sorted(set(corpora_a) | set(corpora_b)):
        if corpus not in corpora_b:
            lines.append(f"corpus {corpus}: only in {a.label} ({_batches(corpora_a[corpus])})")
        elif corpus not in corpora_a:
            lines.append(f"corpus {corpus}: only in {b.label} ({_batches(corpora_b[corpus])})")
        elif _batch_keys(corpora_a[corpus]) != _batch_keys(corpora_b[corpus]):
            lines.append(
                f"corpus {corpus}: batches {_batches(corpora_a[corpus])} -> {_batches(corpora_b[corpus])}"
            )
    if _batch_keys(a.type_tables) != _batch_keys(b.type_tables):
        lines.append(f"type tables: {_batches(a.type_tables)} -> {_batches(b.type_tables)}")
    for mart in sorted(set(a.row_counts) | set(b.row_counts)):
        if a.row_counts.get(mart) != b.row_counts.get(mart):
            before, after = _count(a.row_counts.get(mart)), _count(b.row_counts.get(mart))
            lines.append(f"rows of {mart}: {before} -> {after}")
    if (a.git_commit, a.git_dirty) != (b.git_commit, b.git_dirty):
        lines.append(f"code: {code_label(a)} -> {code_label(b)}")
    for tool in sorted(set(a.versions) | set(b.versions)):
        if a.versions.get(tool) != b.versions.get(tool):
            lines.append(f"{tool}: {a.versions.get(tool)} -> {b.versions.get(tool)}")
    return lines


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _count(value: int | None) -> str:
    return "absent" if value is None else f"{value:,}"


def _batch_keys(batches: list[dict]) -> list[tuple]:
    return [(b["batch_id"], b.get("checksum")) for b in batches]


def _batches(batches: list[dict]) -> str:
    if not batches:
        return "none"
    return ", ".join(f"#{b['batch_id']} {str(b.get('checksum') or '')[:12]}" for b in batches)


def code_label(record: build_records.BuildRecord) -> str:
    if record.git_commit is None:
        if record.runner == "dbt":
            return "commit not recorded (plain dbt cannot run git; sherliic-dbt records it)"
        return "unknown commit"
    return record.git_commit[:12] + (" (dirty)" if record.git_dirty else "")


def describe_inputs(record: build_records.BuildRecord) -> str:
    """``demo (1 batch), mine (2 batches); types: freebase #4`` for listings."""
    corpora = ", ".join(
        f"{c['corpus']} ({len(c['batches'])} batch{'es' if len(c['batches']) != 1 else ''})"
        for c in record.corpora
    )
    types = ", ".join(f"{t.get('type_source') or t['kind']} #{t['batch_id']}" for t in record.type_tables)
    return (corpora or "no corpus") + (f"; types: {types}" if types else "")


def changed_vars(record: build_records.BuildRecord, defaults: dict[str, Any]) -> str:
    """The vars that differ from the project's defaults, ``r_min=3 corpora=["demo"]``."""
    changed = [
        f"{k}={_json(v)}"
        for k, v in sorted(record.vars.items())
        if k not in NOT_COMPARED_VARS and defaults.get(k, object()) != v
    ]
    return " ".join(changed) or "defaults"
