"""Read the warehouse with SQL on either engine: the demo's summary, the export and other readers of the
marts write one query for both. Opened from a Target (:meth:`warehouse.target.Target.marts`).

Queries use ``%s`` placeholders (bound parameters on both engines) and the SQL both dialects share;
:meth:`Marts.function` names the few functions that differ.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # target.py opens Marts
    from warehouse.target import Target

# function -> (Postgres, Spark) spelling
FUNCTIONS = {"array_join": ("array_to_string", "array_join")}
# type -> (Postgres, Spark) spelling (Spark's `float` is single precision)
TYPES = {"double": ("double precision", "double"), "text": ("text", "string")}


class Marts:
    """Queries on one engine's warehouse (open with :meth:`Target.marts`)."""

    def __init__(self, target: Target, connection):
        self.target, self.engine, self._connection = target, target.engine, connection

    @property
    def schema(self) -> str:
        """The schema of the marts of the Target's build."""
        return self.target.marts_schema

    def function(self, name: str) -> str:
        """The engine's name of a function whose spelling differs (FUNCTIONS)."""
        return FUNCTIONS[name][self.engine == "spark"]

    def type(self, name: str) -> str:
        """The engine's name of a type whose spelling differs (TYPES)."""
        return TYPES[name][self.engine == "spark"]

    def execute(self, sql: str, params: Sequence = ()) -> None:
        """Run a statement (DDL, a temp table)."""
        if self.engine == "spark":
            self._connection.sql(sql.replace("%s", "?"), args=list(params) or None).collect()
        else:
            self._connection.execute(sql, params or None)

    def temp_table_as(self, name: str, sql: str, index: Sequence[str] = ()) -> None:
        """A session table `name` holding the rows of `sql`: a Postgres temp table (with an index on the
        `index` columns, analyzed), a Spark temp view of the rows computed once (a local checkpoint)."""
        self.drop_temp_tables(name)
        if self.engine == "spark":
            # Not `cache table`: a query joining a cached view with a cached view defined over it recomputed
            # the second from the marts (docs/spark.md). A checkpoint has no plan to recompute: it is held
            # by the executors like a cache, and a lost executor fails the query instead of recomputing.
            self._connection.sql(sql).localCheckpoint(eager=True).createOrReplaceTempView(name)
            return
        self.execute(f"create temp table {name} as {sql}")
        if index:
            self.execute(f"create index on {name} ({', '.join(index)})")
        self.execute(f"analyze {name}")

    def temp_table_of(self, name: str, frame, types: dict[str, str]) -> None:
        """A session table `name` with the rows of a pandas DataFrame; `types` maps each column to a
        TYPES name or a type both engines spell alike (integer, boolean)."""
        self.drop_temp_tables(name)
        columns = list(types)
        rows = [
            tuple(None if isinstance(value, float) and math.isnan(value) else value for value in row)
            for row in frame[columns].itertuples(index=False)
        ]
        if self.engine == "spark":
            schema = ", ".join(f"{c} {TYPES[t][1] if t in TYPES else t}" for c, t in types.items())
            self._connection.createDataFrame(rows, schema=schema).createOrReplaceTempView(name)
            return
        spelled = ", ".join(f"{c} {TYPES[t][0] if t in TYPES else t}" for c, t in types.items())
        self.execute(f"create temp table {name} ({spelled})")
        with self._connection.cursor().copy(f"copy {name} ({', '.join(columns)}) from stdin") as copy:
            for row in rows:
                copy.write_row(row)
        self.execute(f"analyze {name}")

    def drop_temp_tables(self, *names: str) -> None:
        for name in names:
            if self.engine == "spark":
                self._connection.catalog.dropTempView(name)  # its rows go with the frame (Spark's cleaner)
            else:
                self.execute(f"drop table if exists {name}")

    def rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
        """All rows (a result small enough for memory: Spark collects it in one job, where stream's
        local iterator runs one job per partition)."""
        if self.engine == "spark":
            frame = self._connection.sql(sql.replace("%s", "?"), args=list(params) or None)
            return [tuple(row) for row in frame.collect()]
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
def marts_of(source: Target | Marts) -> Iterator[Marts]:
    """`source` itself when it is open Marts (a caller holding one Spark session for many queries), else
    the Target's marts, open for the block."""
    if isinstance(source, Marts):
        yield source
        return
    with source.marts() as marts:
        yield marts
