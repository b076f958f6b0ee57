"""Read the warehouse with SQL on either engine (SHERLIIC_ENGINE): the demo's summary, the export and
other readers of the marts write one query for both.

Queries use ``%s`` placeholders (bound parameters on both engines) and the SQL both dialects share;
:meth:`Marts.function` names the few functions that differ.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from warehouse.engine import current_engine

# function -> (Postgres, Spark) spelling
FUNCTIONS = {"array_join": ("array_to_string", "array_join")}


class Marts:
    """Queries on one engine's warehouse (open with :func:`open_marts`)."""

    def __init__(self, engine: str, connection):
        self.engine, self._connection = engine, connection

    def function(self, name: str) -> str:
        """The engine's name of a function whose spelling differs (FUNCTIONS)."""
        return FUNCTIONS[name][self.engine == "spark"]

    def rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
        return list(self.stream(sql, params))

    def one(self, sql: str, params: Sequence = ()) -> tuple:
        return self.rows(sql, params)[0]

    def stream(self, sql: str, params: Sequence = ()) -> Iterator[tuple]:
        """The rows one by one (a server-side cursor / Spark's local iterator: big results never sit
        in memory whole)."""
        if self.engine == "spark":
            frame = self._connection.sql(sql.replace("%s", "?"), args=list(params) or None)
            for row in frame.toLocalIterator():
                yield tuple(row)
            return
        with self._connection.cursor(name="marts_stream") as cursor:
            cursor.execute(sql, params or None)
            while chunk := cursor.fetchmany(10_000):
                yield from chunk

    def has_table(self, schema: str, table: str) -> bool:
        if self.engine == "spark":
            return bool(self._connection.catalog.tableExists(f"{schema}.{table}"))
        row = self._connection.execute("select to_regclass(%s)", (f"{schema}.{table}",)).fetchone()
        return row[0] is not None

    @property
    def connection(self):
        """The psycopg connection (Postgres) or the SparkSession (Spark)."""
        return self._connection


@contextmanager
def open_marts(engine: str | None = None, url: str | None = None) -> Iterator[Marts]:
    """The warehouse of `engine` (default SHERLIIC_ENGINE; Postgres when a `url` is given). On Spark this
    process holds the local catalog's one-process metastore until the block ends."""
    engine = engine or ("postgres" if url else current_engine())
    if engine == "spark":
        from warehouse.engine import spark_session

        spark = spark_session("sherliic-marts")
        try:
            yield Marts("spark", spark)
        finally:
            spark.stop()
        return
    from warehouse.server import connect

    with connect(url) as conn:
        yield Marts("postgres", conn)
