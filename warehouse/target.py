"""Where a command works: the warehouse :class:`Target`.

A command builds ONE Target at its edge (:func:`warehouse.command_line.target_options`, from its
``--engine`` / ``--database-url`` / ``--build`` flags and the environment, checked there) and hands it
down. Everything below receives the Target, or a connection, session or :class:`~warehouse.target.Marts`
that warehouse/ opened from it: no code outside warehouse/ handles a URL or opens a connection.

    target = Target.from_environment()              # SHERLIIC_ENGINE, DATABASE_URL, SHERLIIC_PGDATA, ...
    with target.connect() as conn: ...              # Postgres (the embedded server is started if needed)
    with target.marts() as marts: ...               # either engine: SQL on the warehouse
    Target.postgres("postgresql://u@h/db")          # one database, e.g. a test's

The Target is a plain frozen value (picklable: worker processes receive it, never a connection).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlparse

import psycopg
from psycopg.conninfo import conninfo_to_dict

from warehouse import engine as spark_engine
from warehouse import server
from warehouse.engine import SparkSettings
from warehouse.errors import ConfigurationError
from warehouse.settings import PROJECT_ROOT

ENGINES = ("postgres", "spark")
DBT_TARGETS = {"postgres": "default", "spark": "spark"}
RAW_SCHEMA = "raw"
RESULTS_SCHEMA = "results"
MARTS_SCHEMA = "warehouse"  # the live schema every mart is published to
STAGING_SUFFIX = "__next"  # a build's staging schema: <schema>__next (dbt_project/macros/atomic_publish.sql)
POSTGRES_SCHEMES = ("postgresql", "postgres")
# A build's name becomes part of a schema name and of file names: words of lowercase letters and digits
# joined by single underscores, at most 40 characters (the dbt project checks the same: macros/
# build_records.sql, build_name). No name holds `__`, so `build_<name>` never ends in STAGING_SUFFIX:
# the schemas of two builds cannot collide, whatever their names.
BUILD_NAME = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")
BUILD_NAME_MAX = 40
DEFAULT_BUILD = "default"  # the name of the build without a name (schema warehouse), where one is needed
NAMED_BUILD_SCHEMA_PREFIX = "build_"
STAGING_SUFFIX = "__next"  # a build's staging schema: <schema>__next (dbt_project/macros/atomic_publish.sql)


@dataclass(frozen=True)
class Target:
    """The warehouse a command works on: engine, how to connect, schemas and which build."""

    engine: str = "postgres"  # where the raw tables and the marts live
    # the Postgres database (None: the embedded server whose data lives in pgdata); on Spark it holds
    # what stays in Postgres on either engine (benchmark items, results, annotations)
    database_url: str | None = None
    pgdata: Path = PROJECT_ROOT / ".pgdata"
    spark: SparkSettings = field(default_factory=SparkSettings)
    build: str | None = None  # a named build (its own marts schema); None = the default build

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ConfigurationError(f"engine {self.engine!r}: expected one of {', '.join(ENGINES)}")
        if self.database_url is not None:
            check_database_url(self.database_url)
        if self.build == DEFAULT_BUILD:  # `--build default` names the default build
            object.__setattr__(self, "build", None)
        if self.build is not None and (
            not isinstance(self.build, str)
            or not BUILD_NAME.fullmatch(self.build)
            or len(self.build) > BUILD_NAME_MAX
        ):
            raise ConfigurationError(
                f"build name {self.build!r}: lowercase letters and digits, words joined by single '_', "
                f"starting with a letter, at most {BUILD_NAME_MAX} characters"
            )

    # -- making one ------------------------------------------------------------------------------------
    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        engine: str | None = None,
        database_url: str | None = None,
        build: str | None = None,
    ) -> Target:
        """The Target of a command: its flags (when given) over the environment (SHERLIIC_ENGINE,
        DATABASE_URL, SHERLIIC_PGDATA, SHERLIIC_BUILD, SHERLIIC_SPARK_*), every value checked here, once."""
        environ = os.environ if environ is None else environ
        if "DATABASE_URL" in environ and not environ["DATABASE_URL"].strip() and database_url is None:
            raise ConfigurationError(
                "DATABASE_URL is set but empty: unset it to use the embedded server, or give a URL"
            )
        chosen_engine = (engine or environ.get("SHERLIIC_ENGINE") or "postgres").strip().lower()
        if chosen_engine not in ENGINES:
            raise ConfigurationError(
                f"SHERLIIC_ENGINE={chosen_engine!r}: expected one of {', '.join(ENGINES)}"
            )
        if chosen_engine == "spark" and database_url is not None:
            # the marts live in the Spark catalog; a URL typed beside it is a mistake
            raise ConfigurationError(
                "--database-url names a Postgres database; it cannot go with --engine spark"
            )
        return cls(
            engine=chosen_engine,
            database_url=database_url or environ.get("DATABASE_URL") or None,
            pgdata=Path(environ.get("SHERLIIC_PGDATA") or PROJECT_ROOT / ".pgdata"),
            spark=SparkSettings.from_environment(environ),
            build=build or environ.get("SHERLIIC_BUILD") or None,
        )

    @classmethod
    def postgres(cls, url: str, *, build: str | None = None) -> Target:
        """The Postgres database at `url` (the Python API's and the tests' way in)."""
        return cls(engine="postgres", database_url=url, build=build)

    def environment(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """`environ` (default this process's) with the variables from which :meth:`from_environment`
        makes this Target again: the ``env=`` of a child process that is to work on the same warehouse
        (this process's own environment is never written)."""
        env = dict(os.environ if environ is None else environ)
        settings: dict[str, str | None] = {
            "SHERLIIC_ENGINE": self.engine,
            "DATABASE_URL": self.database_url,
            "SHERLIIC_PGDATA": str(self.pgdata),
            "SHERLIIC_BUILD": self.build,
            **self.spark.environment(),
        }
        for name, value in settings.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    def with_build(self, build: str | None) -> Target:
        """The same warehouse, another build."""
        return replace(self, build=build)

    def with_engine(self, engine: str) -> Target:
        """The same settings on another engine (e.g. copying a Postgres raw schema into Spark)."""
        return replace(self, engine=engine)

    def on_postgres(self) -> Target:
        """The Postgres side of this Target: benchmark items, results and annotations live there on
        either engine."""
        return self if self.engine == "postgres" else replace(self, engine="postgres")

    # -- names -----------------------------------------------------------------------------------------
    @property
    def build_name(self) -> str:
        """The build's name as results and reports show it: its name, or "default"."""
        return DEFAULT_BUILD if self.build is None else self.build

    @property
    def marts_schema(self) -> str:
        """The schema the marts of this Target's build are published to: `warehouse` for the default
        build, `build_<name>` for a named one (Postgres only: on Spark, where models are built in place
        without an atomic publish, a named build is refused in one line)."""
        if self.build is None:
            return MARTS_SCHEMA
        if self.engine == "spark":
            raise ConfigurationError(
                f"named builds (build {self.build}) need the postgres engine: on Spark models are built in "
                "place, so a failed build could not be kept from replacing a good one (docs/design.md §2)"
            )
        return NAMED_BUILD_SCHEMA_PREFIX + self.build

    @property
    def search_path(self) -> str:
        """The Postgres search path of a reader of this build: its marts schema first (unqualified mart
        names are the build's), then public."""
        return f"{self.marts_schema},public"

    @property
    def dbt_target(self) -> str:
        """The dbt target (dbt_project/profiles.yml) of this engine."""
        return DBT_TARGETS[self.engine]

    def describe(self) -> str:
        """Where this is, for messages: never a password."""
        if self.engine == "spark":
            where = f"spark catalog {self.spark.catalog_dir}"
        elif self.database_url is None:
            where = f"embedded server in {self.pgdata}"
        else:
            where = server.redact(self.database_url)
        return where + (f", build {self.build}" if self.build else "")

    # -- Postgres --------------------------------------------------------------------------------------
    def url(self) -> str:
        """The Postgres URL (the embedded server is started and its database created if needed). For
        warehouse/ only: libraries that need a URL string (SQLAlchemy, psql, dbt) get it here."""
        if self.database_url is not None:
            return self.database_url
        return server.embedded_database_url(self.pgdata)

    def connect(self, *, autocommit: bool = False, read_only: bool = False) -> psycopg.Connection:
        """A new connection to the Postgres database (on Spark: the Postgres side); one
        :class:`DatabaseUnavailable` line when it cannot be reached (password hidden). read_only: every
        transaction on it is read-only."""
        conn = server.connect(self.url(), autocommit=autocommit)
        if read_only:
            conn.read_only = True
        return conn

    def ensure_schema(self) -> None:
        """Create or update the raw and results schemas when missing or outdated (Postgres; on Spark the
        loaders create the raw tables)."""
        if self.engine == "postgres":
            server.ensure_schema(self.url())

    def dbt_env(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment dbt runs in: `environ` (default this process's) plus what the profile reads:
        the connection (DATABASE_URL, also for the embedded server: the URL of the server this process
        found). The build is a dbt var (builds.runner); a named build also gets target and log folders of
        its own (dbt_project/target/builds/<name>), so that two builds never share a manifest or a
        partial-parse cache."""
        env = dict(os.environ if environ is None else environ)
        env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "False"
        self.marts_schema  # noqa: B018 - a named build on Spark is refused here, in one line
        if self.build is not None:
            env["DBT_TARGET_PATH"] = f"target/builds/{self.build}"
            env["DBT_LOG_PATH"] = f"logs/builds/{self.build}"
        if self.engine == "spark":
            env.update(spark_engine.dbt_env(self.spark))
            # dbt's session starts a JVM of its own: never attach to a spark-submit driver's
            env.pop("PYSPARK_GATEWAY_PORT", None)
            env.pop("PYSPARK_GATEWAY_SECRET", None)
        else:
            env["DATABASE_URL"] = self.url()
        return env

    # -- either engine ---------------------------------------------------------------------------------
    def spark_session(self, app_name: str = "sherliic"):
        """This process's Spark session on the Target's catalog (created on first call)."""
        self._require("spark")
        return spark_engine.spark_session(self.spark, app_name)

    @contextmanager
    def marts(self, *, read_only: bool = False) -> Iterator[Marts]:
        """The warehouse, for SQL on either engine, open for the block (on Spark the process holds the
        local catalog's one-process metastore until the block ends)."""
        if self.engine == "spark":
            spark = self.spark_session("sherliic-marts")
            try:
                yield Marts(self, spark)
            finally:
                spark.stop()
            return
        with self.connect(read_only=read_only) as conn:
            yield Marts(self, conn)

    def require_installed(self) -> None:
        """ConfigurationError unless this Target's engine can run here (on Spark: the [spark] extra is
        installed), so that a command says so in one line before it starts. A named build on Spark is
        refused first: no extra would make it work."""
        if self.engine == "spark":
            self.marts_schema  # noqa: B018 - refuses a named build
            spark_engine.require_spark_extra()

    def _require(self, engine: str) -> None:
        if self.engine != engine:
            raise ConfigurationError(f"this needs the {engine} engine; the target is {self.describe()}")


def build_of_schema(schema: str) -> str | None:
    """The build whose marts `schema` holds ("default" for `warehouse`, NAME for `build_NAME`; also their
    staging schemas `<schema>__next` while a build runs), or None for any other schema (raw, results,
    builds, public, ...)."""
    live = schema.removesuffix(STAGING_SUFFIX)
    if live == MARTS_SCHEMA:
        return DEFAULT_BUILD
    name = live.removeprefix(NAMED_BUILD_SCHEMA_PREFIX)
    if live.startswith(NAMED_BUILD_SCHEMA_PREFIX) and BUILD_NAME.fullmatch(name):
        return name
    return None


def check_database_url(url: str) -> None:
    """A Postgres URL libpq accepts, or one line saying what is wrong with it (the password never shown)."""
    shown = server.redact(url) if "://" in url else "<not a URL>"
    try:
        parsed = urlparse(url)
        parsed.port  # noqa: B018 - raises on a port that is not a number from 0 to 65535
    except ValueError as error:
        problem = "the port is not a number" if "port" in str(error).lower() else str(error)
        raise ConfigurationError(f"database URL {shown}: {problem}") from None
    if parsed.scheme not in POSTGRES_SCHEMES:
        raise ConfigurationError(
            f"database URL {shown}: expected postgresql://user[:password]@host[:port]/database"
        )
    if parsed.netloc.count("@") > 1:  # libpq would end the password at the first '@', the rest a host name
        raise ConfigurationError(
            f"database URL {shown}: an '@' in the user name or password must be written %40"
        )
    try:  # what libpq itself refuses (unknown options, bad percent-encoding, stray characters)
        conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        reason = server.hide_passwords(" ".join(str(error).split()), url)
        raise ConfigurationError(f"database URL {shown}: {reason}") from None


# The marts on either engine: the demo's summary, the export and other readers of the marts write one
# query for both. Queries use ``%s`` placeholders (bound parameters on both engines) and the SQL both
# dialects share; :meth:`Marts.function` names the few functions that differ.
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
