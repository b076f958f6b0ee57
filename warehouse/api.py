"""The marts as pandas DataFrames, on either engine (the Python API; README "Python API").

    from warehouse import read_mart, read_sql, list_marts

    list_marts()                                      # ['annotation_item_labels', ..., 'untyped_edges']
    top = read_mart("inference_candidates", columns=["premise_path", "hypothesis_path", "score"],
                    where="alignment = %s", params=["crossed"], order_by="score desc", limit=10)
    read_sql("select count(*) as n from relations")   # the marts of the build read (here the default)

Postgres (the default; ``database_url`` or DATABASE_URL, else the embedded server) is read through
SQLAlchemy with ``pandas.read_sql``; Spark (``engine="spark"`` or SHERLIIC_ENGINE=spark) through the
local catalog's Spark session and ``toPandas``. Each function opens and closes its own connection; for
many reads in a row (a Spark session takes seconds to start) use ``with open_warehouse() as wh:
wh.read_mart(...)``.

``build="trial"`` reads the marts of a named build (``sherliic-dbt run --build trial``; schema
``build_trial``) instead of the default build (schema ``warehouse``); ``sherliic-dbt builds`` lists them.
A query's unqualified mart names are the build's: on Postgres the read-only connection's search path is
the build's schema, then public; on Spark the build's database is the current one. When the build is
chosen (``build=``, also ``build="default"``, or the Target's named build: SHERLIIC_BUILD, ``--build``)
a query naming another build's schema (``warehouse.rules`` while reading ``trial``, ``build_other.rules``)
is a :class:`QueryRefused`: one read, one build. To compare builds, read without ``build=`` and name
both schemas. raw.*, results.* and builds.* are readable either way.
``corpora=["a", "b"]`` asks for the marts built from exactly those corpora: when the build was made from
other corpora (mart ``teg_corpora``) a :class:`CorporaMismatch` says which command rebuilds it, instead
of silently answering from another graph.

``where`` is a condition on the mart's columns: pass values through ``params`` (``%s`` placeholders, bound
by the database on both engines), a LIKE pattern too (``where="premise_path like %s", params=["%buy%"]``).
``order_by`` names columns, each with asc/desc (``"score desc, candidate_key"``).

The read API only reads (docs/design.md §2): each call runs ONE query (``read_sql`` refuses a second
statement and anything but select, values, table, with … select, show, explain), ``where`` may use
only the mart's columns, values, ``%s``, operators and a few functions, ``order_by`` only columns and
directions (:class:`QueryRefused` otherwise); on Postgres every read also runs as a prepared statement in
a read-only transaction of its own, so the server refuses any write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import pandas as pd
from psycopg.conninfo import conninfo_to_dict
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from warehouse import server
from warehouse.query_guard import (
    QueryRefused,
    check_params,
    check_query,
    limit_clause,
    order_by_clause,
    schema_references,
    where_clause,
)
from warehouse.settings import DBT_PROJECT_DIR
from warehouse.target import Target, build_of_schema

CORPORA_MART = "teg_corpora"  # one row (corpus_name) per corpus the current build was made from
# the public API (re-exported by warehouse/__init__.py); QueryRefused comes from warehouse.query_guard
__all__ = [
    "CorporaMismatch",
    "MartError",
    "QueryRefused",
    "list_marts",
    "open_warehouse",
    "read_mart",
    "read_sql",
]


class MartError(ValueError):
    """A mart that does not exist or has not been built, or a column it does not have."""


class CorporaMismatch(MartError):
    """The warehouse was built from other corpora than those asked for."""

    def __init__(self, requested: Iterable[str], built: Iterable[str], build: str | None = None):
        self.requested, self.built = sorted(set(requested)), sorted(set(built))
        which = "the warehouse" if build is None else f"build {build}"
        super().__init__(
            f"{which} was built from corpora {_names(self.built)}, not {_names(self.requested)}; "
            f"rebuild it with: {rebuild_command(self.requested, build)}"
        )


def list_marts() -> list[str]:
    """Names of the marts the dbt project defines (dbt_project/models/marts/<area>/<name>.sql)."""
    return sorted(path.stem for path in (DBT_PROJECT_DIR / "models" / "marts").glob("*/*.sql"))


def rebuild_command(corpora: Iterable[str], build: str | None = None) -> str:
    """The command that rebuilds the warehouse (or the named `build`) from exactly `corpora` (dbt var
    ``corpora``)."""
    names = ", ".join(f'"{name}"' for name in sorted(set(corpora)))
    named = f" --build {build}" if build else ""
    return f"sherliic-dbt build{named} --vars '{{corpora: [{names}]}}'"


def check_corpora(requested: Iterable[str], built: Iterable[str], build: str | None = None) -> None:
    """Raise :class:`CorporaMismatch` unless `requested` and `built` name the same set of corpora."""
    if isinstance(requested, str):  # set("trex") would be its letters
        raise TypeError(f"corpora must be a list of corpus names, got the string {requested!r}")
    if set(requested) != set(built):
        raise CorporaMismatch(requested, built, build)


class Warehouse:
    """One open connection to the marts (see :func:`open_warehouse`)."""

    def __init__(self, target: Target, connection, *, build_chosen: bool = False):
        self.target, self.engine, self._connection = target, target.engine, connection
        self.schema = target.marts_schema
        # the caller chose the build (build=, or the Target's named build): its queries read that build only
        self.build_chosen = build_chosen

    def read_sql(self, query: str, params: Sequence | None = None) -> pd.DataFrame:
        """One query's result (``%s`` placeholders for `params`); unqualified names are the build's marts.
        :class:`QueryRefused` for anything but one select, values, table, with … select, show or explain,
        and, when the build was chosen, for a query naming another build's schema."""
        check_query(query, self.engine)
        if self.build_chosen:
            self._refuse_other_builds(query)
        if self.engine == "spark":
            frame = self._connection.sql(query.replace("%s", "?"), args=list(params or ()) or None)
            return frame.toPandas()
        try:
            return pd.read_sql_query(query, self._connection, params=tuple(params) if params else None)
        finally:
            self._connection.rollback()  # each read its own read-only transaction; usable after an error

    def has_mart(self, name: str) -> bool:
        """Whether mart `name` has been built in this warehouse."""
        if self.engine == "spark":
            return bool(self._connection.catalog.tableExists(f"{self.schema}.{name}"))
        return (
            self._connection.exec_driver_sql("select to_regclass(%s)", (f"{self.schema}.{name}",)).scalar()
            is not None
        )

    def columns(self, name: str) -> list[str]:
        """The columns of mart `name`, in table order."""
        self._require(name)
        if self.engine == "spark":
            return list(self._connection.table(f"{self.schema}.{name}").columns)
        rows = self._connection.exec_driver_sql(
            "select column_name from information_schema.columns where table_schema = %s and table_name = %s "
            "order by ordinal_position",
            (self.schema, name),
        )
        return [row[0] for row in rows]

    def built_corpora(self) -> list[str]:
        """The corpora the current build was made from (mart teg_corpora)."""
        if not self.has_mart(CORPORA_MART):
            raise MartError(
                f"this warehouse has no mart {self.schema}.{CORPORA_MART}, so the corpora it was built from "
                f"are unknown; rebuild it (sherliic-dbt build) with a version of the project that has it"
            )
        frame = self.read_sql(f"select corpus_name from {self.schema}.{CORPORA_MART}")
        return sorted(frame["corpus_name"])

    def read_mart(
        self,
        name: str,
        *,
        columns: Sequence[str] | None = None,
        where: str | None = None,
        params: Sequence | None = None,
        order_by: str | Sequence[str] | None = None,
        limit: int | None = None,
        corpora: Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """Mart `name` as a DataFrame: all its columns or `columns`, rows matching the condition `where`
        (the mart's columns, values, ``%s`` placeholders for `params`, operators), sorted by `order_by`
        (columns with asc/desc), at most `limit` rows. With `corpora`, first checks that the warehouse was
        built from exactly those corpora (:class:`CorporaMismatch` otherwise)."""
        if corpora is not None:
            check_corpora(corpora, self.built_corpora(), self.target.build)
        available = self.columns(name)
        if columns is not None:
            unknown = [column for column in columns if column not in available]
            if unknown:
                raise MartError(
                    f"mart {name} has no column {', '.join(map(repr, unknown))}; its columns: "
                    f"{', '.join(available)}"
                )
        selected = ", ".join(self._quote(column) for column in columns) if columns else "*"
        query = f"select {selected} from {self.schema}.{name}"
        if where:
            query += f" where {where_clause(where, available)}"
        check_params(where, params)
        if order_by:
            query += f" order by {order_by_clause(order_by, available, self._quote)}"
        if limit is not None:
            query += f" {limit_clause(limit, self.engine)}"
        return self.read_sql(query, params)

    def _refuse_other_builds(self, query: str) -> None:
        """QueryRefused (one line) when `query` names the marts schema of a build other than this one."""
        others = [
            schema
            for schema in schema_references(query, self.engine)
            if schema != self.schema and build_of_schema(schema) is not None
        ]
        if others:
            named = ", ".join(f"{schema} (build {build_of_schema(schema)})" for schema in others)
            raise QueryRefused(
                f"this read is of build {self.target.build_name} (schema {self.schema}), but the query names "
                f"the schema of another build: {named}; leave the schema out (unqualified names are build "
                f"{self.target.build_name}'s marts), or read without build= to compare builds"
            )

    def _quote(self, identifier: str) -> str:
        quote = "`" if self.engine == "spark" else '"'
        return quote + identifier.replace(quote, quote * 2) + quote

    def _require(self, name: str) -> None:
        marts = list_marts()
        if name not in marts:
            raise MartError(f"unknown mart {name!r}; the marts: {', '.join(marts)}")
        if not self.has_mart(name):
            named, where = "", self.engine
            if self.target.build:
                named, where = f" --build {self.target.build}", f"{self.engine}, schema {self.schema}"
            raise MartError(
                f"mart {name} has not been built in this warehouse ({where}); build it with "
                f"sherliic-dbt build{named} (make demo builds the demo warehouse)"
            )


def resolve_target(
    target: Target | None = None,
    *,
    engine: str | None = None,
    database_url: str | None = None,
    build: str | None = None,
) -> Target:
    """The Target a Python caller means: `target` as given, else one from `engine` / `database_url` and the
    environment (SHERLIIC_ENGINE, DATABASE_URL, SHERLIIC_BUILD; Postgres when only a URL is given); `build`
    names the build either way ("default": the default build)."""
    if target is None:
        if database_url is not None and engine is None:
            engine = "postgres"
        target = Target.from_environment(engine=engine, database_url=database_url)
    return target if build is None else target.with_build(build)


@contextmanager
def open_warehouse(
    target: Target | None = None,
    *,
    engine: str | None = None,
    database_url: str | None = None,
    build: str | None = None,
) -> Iterator[Warehouse]:
    """The warehouse of `target` (default: `engine` "postgres" or "spark" and `database_url`, else
    SHERLIIC_ENGINE / DATABASE_URL), the marts of `build` (default: the Target's, else the default build):
    unqualified names in its queries are that build's marts. On Spark the process holds the local catalog
    (one process at a time) until the block ends."""
    target = resolve_target(target, engine=engine, database_url=database_url, build=build)
    chosen = build is not None or target.build is not None
    if target.engine == "spark":
        with target.marts() as marts:
            spark = marts.connection
            if spark.catalog.databaseExists(target.marts_schema):  # created by the first dbt build
                spark.catalog.setCurrentDatabase(target.marts_schema)
            yield Warehouse(target, spark, build_chosen=chosen)
        return
    url = target.url()
    # connections come from warehouse.server.connect: an unreachable server is one DatabaseUnavailable line
    # NullPool: no idle connection is left behind once the block ends
    sql_engine = create_engine(
        server.sqlalchemy_url(url),
        creator=lambda: _read_only_connection(url, target.search_path),
        poolclass=NullPool,
    )
    try:
        with sql_engine.connect() as connection:
            yield Warehouse(target, connection, build_chosen=chosen)
    finally:
        sql_engine.dispose()


def _read_only_connection(url: str, search_path: str):
    """A connection on which every transaction is read-only and every statement is prepared (the extended
    protocol: the server refuses a string of several statements), with `search_path` set when it opens
    (not by SET, which each read's rollback would undo)."""
    given = conninfo_to_dict(url).get("options")  # the URL's own options (statement_timeout, ...) stay
    options = " ".join(filter(None, [given, f"-c search_path={search_path}"]))
    connection = server.connect(url, prepare_threshold=0, options=options)
    connection.read_only = True
    return connection


def read_mart(
    name: str,
    *,
    columns: Sequence[str] | None = None,
    where: str | None = None,
    params: Sequence | None = None,
    order_by: str | Sequence[str] | None = None,
    limit: int | None = None,
    corpora: Iterable[str] | None = None,
    target: Target | None = None,
    engine: str | None = None,
    database_url: str | None = None,
    build: str | None = None,
) -> pd.DataFrame:
    """Mart `name` of `build` (default: the default build) as a DataFrame (:meth:`Warehouse.read_mart`),
    on its own connection."""
    with open_warehouse(target, engine=engine, database_url=database_url, build=build) as warehouse:
        return warehouse.read_mart(
            name, columns=columns, where=where, params=params, order_by=order_by, limit=limit, corpora=corpora
        )


def read_sql(
    query: str,
    params: Sequence | None = None,
    *,
    target: Target | None = None,
    engine: str | None = None,
    database_url: str | None = None,
    build: str | None = None,
) -> pd.DataFrame:
    """Any query's result as a DataFrame (``%s`` placeholders for `params`), on its own connection.
    Unqualified mart names are those of `build` (default: the Target's, else the default build); with
    `build` given, naming another build's schema is a :class:`QueryRefused`."""
    with open_warehouse(target, engine=engine, database_url=database_url, build=build) as warehouse:
        return warehouse.read_sql(query, params)


def _names(corpora: list[str]) -> str:
    return "[" + ", ".join(corpora) + "]" if corpora else "[] (none)"
