"""The raw schema in Spark (SHERLIIC_ENGINE=spark): create it, and copy a Postgres raw schema into it.

dbt's sources read raw.relation_instances etc.; on Spark these are Parquet tables of the Spark
catalog (warehouse.engine) with the raw schema's columns (warehouse/schema/spark/raw.sql). The copy
moves every row of a Postgres database's raw.* tables with their ids, so the same dbt project built
on both engines can be compared row for row (`python -m warehouse.spark_raw copy`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import click

from warehouse.command_line import CONTEXT, run, target_options, version_option
from warehouse.server import SCHEMA_DIR
from warehouse.target import ENGINES, Target

SPARK_SCHEMA_FILE = SCHEMA_DIR / "spark" / "raw.sql"
COPY_CHUNK_ROWS = 200_000


def spark_schema_statements() -> list[str]:
    """The statements of warehouse/schema/spark/raw.sql, comments dropped."""
    text = "\n".join(
        line for line in SPARK_SCHEMA_FILE.read_text().splitlines() if not line.lstrip().startswith("--")
    )
    return [statement.strip() for statement in re.split(r";\s*$", text, flags=re.M) if statement.strip()]


def raw_table_names() -> list[str]:
    """raw.* tables of the Spark schema, in file order (e.g. 'relation_instances')."""
    pattern = re.compile(r"create table if not exists raw\.(\w+)", re.I)
    return [m.group(1) for s in spark_schema_statements() if (m := pattern.search(s))]


# Columns added to raw tables after their first release: catalogs created before get them on the next
# apply (Spark has no `add column if not exists`). Their rows read as null there.
ADDED_COLUMNS = {
    "load_batches": {"corpus_name": "string"},
    "annotation_batches": {"build": "string", "build_id": "bigint"},
}


def apply_spark_schema(spark) -> None:
    """Create the raw database and tables in the Spark catalog, and add newer columns (idempotent)."""
    for statement in spark_schema_statements():
        spark.sql(statement)
    for table, columns in ADDED_COLUMNS.items():
        present = set(spark.table(f"raw.{table}").columns)
        missing = [f"{name} {kind}" for name, kind in columns.items() if name not in present]
        if missing:
            spark.sql(f"alter table raw.{table} add columns ({', '.join(missing)})")


def _select_list(spark_schema) -> str:
    """Postgres select list giving the Spark table's columns in its order and types."""
    columns = []
    for field in spark_schema.fields:
        kind = field.dataType.simpleString()
        if kind == "string":
            columns.append(f"cast({field.name} as text) as {field.name}")  # jsonb -> JSON text
        elif kind == "timestamp":
            columns.append(f"({field.name} at time zone 'UTC') as {field.name}")  # session is UTC
        else:
            columns.append(field.name)
    return ", ".join(columns)


def _postgres_chunks(source: Target, table: str, select_list: str) -> Iterator[list[tuple]]:
    with source.connect() as conn, conn.cursor(name=f"copy_{table}") as cursor:  # server-side cursor
        cursor.execute(f"select {select_list} from raw.{table}")
        while rows := cursor.fetchmany(COPY_CHUNK_ROWS):
            yield rows


def copy_raw_tables(spark, source: Target, tables: list[str] | None = None) -> dict[str, int]:
    """Replace the Spark raw.* tables by the rows of `source`'s Postgres database; rows per table."""
    apply_spark_schema(spark)
    counts = {}
    for table in tables or raw_table_names():
        schema = spark.table(f"raw.{table}").schema
        counts[table] = 0
        overwrite = True  # the first chunk replaces the table, even when the copy is empty
        for rows in _postgres_chunks(source, table, _select_list(schema)):
            spark.createDataFrame(rows, schema).write.insertInto(f"raw.{table}", overwrite=overwrite)
            overwrite = False
            counts[table] += len(rows)
        if overwrite:
            spark.createDataFrame([], schema).write.insertInto(f"raw.{table}", overwrite=True)
    return counts


@click.group(context_settings=CONTEXT)
@version_option
def cli() -> None:
    """The raw schema in the local Spark catalog (SHERLIIC_ENGINE=spark; `make spark-deps`)."""


@cli.command()
def init() -> None:
    """Create the Spark raw tables (idempotent)."""
    spark = Target.from_environment(engine="spark").spark_session("sherliic-raw")
    try:
        apply_spark_schema(spark)
    finally:
        spark.stop()


@cli.command()
@target_options(engines=ENGINES)
def copy(target: Target) -> None:
    """Replace the Spark raw tables by a Postgres database's raw.* rows (--database-url, DATABASE_URL,
    else the embedded server)."""
    spark = target.with_engine("spark").spark_session("sherliic-raw")
    try:
        for table, n in copy_raw_tables(spark, target.on_postgres()).items():
            print(f"raw.{table}: {n} rows")
    finally:
        spark.stop()


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="python -m warehouse.spark_raw")


if __name__ == "__main__":
    sys.exit(main())
