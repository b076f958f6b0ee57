"""`sherliic-dbt builds`: list the recorded builds with their provenance, compare two, drop one."""

from __future__ import annotations

import json

import click

from warehouse import builds
from warehouse.command_line import CONTEXT
from warehouse.dbt_vars import declared_vars
from warehouse.errors import ConfigurationError
from warehouse.settings import DBT_PROJECT_DIR
from warehouse.target import Target


@click.command(context_settings=CONTEXT)
@click.option("--diff", nargs=2, metavar="A B", help="What differs between builds A and B (names or #ids).")
@click.option("--drop", metavar="NAME", help="Drop the named build: its schema, records and dbt folders.")
@click.option("--json", "as_json", is_flag=True, help="The records as JSON (every field).")
@click.pass_obj
def builds_command(target: Target, diff: tuple[str, str] | None, drop: str | None, as_json: bool) -> int:
    """The recorded builds (oldest first), each with its provenance: status, schema, corpora and their
    batches, type tables, vars that differ from the defaults, row counts, code and versions. `live`
    marks the build whose marts a schema holds.

    A build is named by its name (its live build, else its latest record) or by #id."""
    if target.engine != "postgres":
        raise ConfigurationError(
            "build records are kept for Postgres builds: on Spark models are built in place, unrecorded"
        )
    if drop is not None:
        removed = builds.drop_build(target, drop)
        print(f"dropped build {drop}: schema {builds.schema_of(drop)} and {removed} record(s)")
        return 0
    records = builds.list_builds(target)
    if diff is not None:
        a, b = (builds.find_build(records, reference) for reference in diff)
        lines = builds.diff_builds(a, b)
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


def _live(records: list[builds.BuildRecord]) -> set[int]:
    """Per schema, the latest published record: the build whose marts it holds."""
    latest: dict[str, int] = {}
    for record in records:
        if record.published_at is not None:
            latest[record.schema_name] = record.build_id
    return set(latest.values())


def _lines(record: builds.BuildRecord, live: bool, defaults: dict) -> list[str]:
    took = ""
    if record.finished_at is not None:
        took = f", {(record.finished_at - record.started_at).total_seconds():.0f} s"
    status = record.status + (" (live)" if live else "")
    lines = [
        f"#{record.build_id} {record.build_name}: {status}, {record.started_at:%Y-%m-%d %H:%M:%S}{took}, "
        f"schema {record.schema_name}, dbt {record.command}"
    ]
    if record.error:
        lines.append(f"    error: {record.error}")
    lines.append(f"    inputs: {builds.describe_inputs(record)}")
    lines.append(f"    vars: {builds.changed_vars(record, defaults)}")
    if record.row_counts:
        counts = ", ".join(f"{mart} {n:,}" for mart, n in sorted(record.row_counts.items()))
        lines.append(f"    rows: {counts}")
    versions = ", ".join(f"{tool} {v}" for tool, v in sorted(record.versions.items()))
    lines.append(f"    code: {builds.code_label(record)}" + (f"; {versions}" if versions else ""))
    return lines
