"""Build records (Postgres, table builds.builds; docs/design.md §2): what every dbt build built, from what,
with which code, and how it ended.

The dbt project writes them (dbt_project/macros/build_records.sql, through the SQL functions of
warehouse/schema/005_builds.sql): a record begins with the build and is finished in the transaction that
publishes its marts, whether dbt was started by `sherliic-dbt` or by hand. What :mod:`builds.runner` adds
here: the schema's lock (:func:`build_lock`), the git commit and versions (:func:`code_version`,
:func:`tool_versions`), :func:`mark_cancelled` on a signal, and :func:`finish_unrecorded` for a dbt that
ended before it finished its record.

Readers: :func:`current_build` (the record behind a Target's marts: results, reports, exports and
annotation batches name it), :func:`list_builds`, :func:`find_build`, :func:`drop_build`;
comparing and listing them: builds/cli.py (`sherliic-dbt builds`).
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from warehouse.errors import ConfigurationError
from warehouse.settings import DBT_PROJECT_DIR, PROJECT_ROOT
from warehouse.target import DEFAULT_BUILD, MARTS_SCHEMA, NAMED_BUILD_SCHEMA_PREFIX, STAGING_SUFFIX, Target

LOCK_NAMESPACE = "sherliic-build"  # advisory lock (namespace, schema): sherliic-dbt's builds, one at a time
STATUSES = ("running", "succeeded", "failed", "cancelled")
GRAPH_MART = "inference_candidates"  # a record that published it built the graph (not a partial build)


class BuildMismatch(ConfigurationError):
    """Results of two builds that would end up in one report (one line naming both)."""


@dataclass(frozen=True)
class BuildRef:
    """Which build results came from, as results tables and out/baselines.csv name it: the build's name
    ("default" for schema warehouse) and its record (None: built without one)."""

    name: str = DEFAULT_BUILD
    build_id: int | None = None

    @property
    def label(self) -> str:
        return self.name if self.build_id is None else f"{self.name} #{self.build_id}"


def build_ref(target: Target) -> BuildRef:
    """The build whose marts the Target reads, with the record of its live inference candidates."""
    record = current_build(target)
    return BuildRef(target.build_name, None if record is None else record.build_id)


@dataclass(frozen=True)
class BuildRecord:
    """One row of builds.builds."""

    build_id: int
    build_name: str
    schema_name: str
    engine: str
    command: str
    status: str
    started_at: datetime
    finished_at: datetime | None
    published_at: datetime | None
    published_models: list[str]
    vars: dict[str, Any]
    corpora: list[dict]
    type_tables: list[dict]
    git_commit: str | None
    git_dirty: bool | None
    versions: dict[str, str]
    row_counts: dict[str, int]
    exit_code: int | None
    error: str | None
    incremental: bool | None  # None: the build did not build the graph (no int_build_plan in it)
    build_plan: str | None  # the one line of int_build_plan: "incremental build: ..." / "full build: ..."
    runner: str | None  # "dbt" or "sherliic-dbt" (None: recorded before runners were)
    retry_of: int | None  # the failed build a `dbt retry` resumed
    staged_models: list[str] | None  # a failed build's models left in staging for `dbt retry`
    hint: str | None  # what to change when the build published no inference candidate

    @property
    def label(self) -> str:
        """``name #id``, as messages name a build."""
        return f"{self.build_name} #{self.build_id}"

    def provenance(self) -> dict[str, Any]:
        """The record as JSON-ready values (manifest.json, `builds --json`)."""
        return {
            "build": self.build_name,
            "build_id": self.build_id,
            "schema": self.schema_name,
            "engine": self.engine,
            "command": self.command,
            "status": self.status,
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "published_at": _iso(self.published_at),
            "published_models": self.published_models,
            "vars": self.vars,
            "corpora": self.corpora,
            "type_tables": self.type_tables,
            "code": {"git_commit": self.git_commit, "git_dirty": self.git_dirty},
            "versions": self.versions,
            "row_counts": self.row_counts,
            "exit_code": self.exit_code,
            "error": self.error,
            "incremental": self.incremental,
            "build_plan": self.build_plan,
            "runner": self.runner,
            "retry_of": self.retry_of,
            "hint": self.hint,
        }

    @property
    def built_graph(self) -> bool:
        """Whether it built the graph (its inference candidates), not only some marts (a partial build)."""
        return GRAPH_MART in self.published_models


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


# -- what sherliic-dbt adds to a record ----------------------------------------------------------------


def code_version(root: Path = PROJECT_ROOT) -> tuple[str | None, bool | None]:
    """(git commit, whether the work tree differs from it) of the project's checkout; (None, None)
    outside a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30
        )
        if commit.returncode != 0:
            return None, None
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None, None
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    return commit.stdout.strip(), dirty


def tool_versions(engine: str) -> dict[str, str]:
    """The versions that shape a build: dbt-core, the adapter, spaCy (it made the paths), the project."""
    adapter = "dbt-spark" if engine == "spark" else "dbt-postgres"
    versions = {name: _installed(name) for name in ("dbt-core", adapter, "spacy", "sherliic-warehouse")}
    return {**versions, "python": platform.python_version()}


def _installed(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


# -- the lock and the record of a running build --------------------------------------------------------


@contextmanager
def build_lock(
    target: Target, *, waiting: Callable[[str], None], stop: Callable[[], bool] = lambda: False
) -> Iterator[psycopg.Connection | None]:
    """Hold the advisory lock of the Target's build schema for the block, on a connection of its own
    (autocommit) that the block may use. Another build of the same schema holding it: `waiting` is told
    once, and the lock is polled until it is free; `stop()` turning true (a signal) gives up: the block
    gets None."""
    schema = target.marts_schema
    conn = target.connect(autocommit=True)
    try:
        told = False
        while not _try_lock(conn, schema):
            if stop():
                yield None
                return
            if not told:
                waiting(_running_description(conn, schema))
                told = True
            time.sleep(0.5)
        yield conn
    finally:
        conn.close()  # the session's lock goes with it


def _try_lock(conn: psycopg.Connection, schema: str) -> bool:
    return conn.execute(
        "select pg_try_advisory_lock(hashtext(%s), hashtext(%s))", (LOCK_NAMESPACE, schema)
    ).fetchone()[0]


def _unlock(conn: psycopg.Connection, schema: str) -> None:
    conn.execute("select pg_advisory_unlock(hashtext(%s), hashtext(%s))", (LOCK_NAMESPACE, schema))


def _running_description(conn: psycopg.Connection, schema: str) -> str:
    row = conn.execute(
        "select build_id, runner, started_at from builds.builds "
        "where schema_name = %s and status = 'running' order by build_id desc limit 1",
        (schema,),
    ).fetchone()
    if row is None:
        return f"another build of schema {schema} is running"
    since = f"{row[2]:%Y-%m-%d %H:%M:%S}"
    return f"build #{row[0]} of schema {schema} is running ({row[1] or 'dbt'} since {since})"


def mark_cancelled(conn: psycopg.Connection, token: str) -> bool:
    """Mark sherliic-dbt's running build (its `token`) cancelled, unless its publish came first (then False:
    the marts are this build's) or it has no record yet (False: its dbt stops before it begins one). Waits
    for a publish in progress (it holds the record's row lock)."""
    return (
        conn.execute(
            "update builds.builds set status = 'cancelled', finished_at = now() "
            "where runner_token = %s and published_at is null and status = 'running'",
            (token,),
        ).rowcount
        == 1
    )


def finish_unrecorded(conn: psycopg.Connection, build_id: int, status: str, error: str | None) -> None:
    """Finish the record of a build whose dbt ended before it did (killed, crashed, or a publish that
    failed): `status` and the line that says why, unless the record was finished meanwhile."""
    conn.execute(
        "update builds.builds set status = %s, error = coalesce(error, %s), finished_at = now() "
        "where build_id = %s and status = 'running'",
        (status, error, build_id),
    )


def note_exit_code(conn: psycopg.Connection, build_id: int, exit_code: int) -> None:
    """dbt's exit code in the record of a build that did not publish (a published one says 0 itself)."""
    conn.execute(
        "update builds.builds set exit_code = %s where build_id = %s and exit_code is null",
        (exit_code, build_id),
    )


def record_of_runner(conn: psycopg.Connection, token: str) -> BuildRecord | None:
    """The record of sherliic-dbt's build `token` (None: its dbt never began one)."""
    found = _records(conn, "runner_token = %s", (token,))
    return found[-1] if found else None


# -- reading the records -------------------------------------------------------------------------------

_COLUMNS = ", ".join(BuildRecord.__dataclass_fields__)


def _records(conn: psycopg.Connection, where: str = "true", params: tuple = ()) -> list[BuildRecord]:
    if conn.execute("select to_regclass('builds.builds')").fetchone()[0] is None:
        return []  # a database whose schema predates build records
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            f"select {_COLUMNS} from builds.builds where {where} order by build_id", params
        ).fetchall()
    return [BuildRecord(**row) for row in rows]


def read_record(conn: psycopg.Connection, build_id: int) -> BuildRecord:
    return _records(conn, "build_id = %s", (build_id,))[0]


def list_builds(target: Target) -> list[BuildRecord]:
    """Every record, oldest first (records left `running` by a process that died are marked failed:
    builds.settle_running)."""
    with target.on_postgres().connect(autocommit=True) as conn:
        for schema in sorted({r.schema_name for r in _records(conn, "status = 'running'")}):
            conn.execute("select builds.settle_running(%s)", (schema,))
        return _records(conn)


def current_build(
    target: Target, mart: str = GRAPH_MART, conn: psycopg.Connection | None = None
) -> BuildRecord | None:
    """The record of the build whose `mart` is live in the Target's marts schema (None: none recorded,
    e.g. built before builds were recorded, or on Spark); read on `conn` when given (a reader's own
    transaction), else on a connection of its own."""
    if target.engine != "postgres":
        return None
    where = "schema_name = %s and published_at is not null and published_models ? %s"
    if conn is not None:
        found = _records(conn, where, (target.marts_schema, mart))
    else:
        with target.connect() as own:
            found = _records(own, where, (target.marts_schema, mart))
    return found[-1] if found else None


def lock_marts_for_reading(conn: psycopg.Connection, schema: str) -> None:
    """ACCESS SHARE locks, in the open transaction of `conn`, on every relation of `schema`: a reader that
    reads several marts takes them all before it reads any, so a build's publish (which takes all of its
    locks at once or none: builds.lock_for_publish) either ends before it or waits until it has ended."""
    relations = [
        sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(name))
        for (name,) in conn.execute(
            "select c.relname from pg_class as c join pg_namespace as n on n.oid = c.relnamespace "
            "where n.nspname = %s and c.relkind in ('r', 'v', 'm', 'p') order by c.relname",
            (schema,),
        )
    ]
    if relations:
        conn.execute(sql.SQL("lock table {} in access share mode").format(sql.SQL(", ").join(relations)))


def find_build(records: list[BuildRecord], reference: str) -> BuildRecord:
    """A build by ``#id`` / id, or by name: the name's live build (its latest published record), else its
    latest record."""
    wanted = reference.removeprefix("#")
    if wanted.isdigit():
        for record in records:
            if record.build_id == int(wanted):
                return record
        raise ConfigurationError(f"no build #{wanted} (sherliic-dbt builds lists them)")
    named = [r for r in records if r.build_name == wanted]
    if not named:
        known = sorted({r.build_name for r in records})
        raise ConfigurationError(
            f"no build named {wanted!r} (recorded: {', '.join(known) or 'none'}; "
            "sherliic-dbt builds lists them)"
        )
    # its live graph first: a later partial build (e.g. of the annotation marts) did not build the graph
    graph = [r for r in named if r.published_at is not None and r.built_graph]
    published = [r for r in named if r.published_at is not None]
    return (graph or published or named)[-1]


def drop_build(
    target: Target,
    name: str,
    project_dir: Path = DBT_PROJECT_DIR,
    waiting: Callable[[str], None] = lambda what: None,
) -> int:
    """Drop a named build: exactly its schema and its staging schema (no other build's schema can have
    either name: warehouse/target.py, BUILD_NAME), its records and its dbt folders; refused while it
    builds. Readers of its marts are waited for (`waiting` is told who, once). Returns the number of
    records removed."""
    if name == DEFAULT_BUILD:
        raise ConfigurationError(
            "the default build (schema warehouse) is not dropped; rebuild it, or name the build to drop"
        )
    named = target.with_build(name)  # checks the name
    schema = named.marts_schema
    schemas = (schema, schema + STAGING_SUFFIX)
    with named.connect(autocommit=True) as conn:
        if not _try_lock(conn, schema):
            raise ConfigurationError(f"build {name} is running; drop it once it has finished")
        try:
            running = conn.execute("select builds.settle_running(%s)", (schema,)).fetchone()[0]
            if running is not None:
                raise ConfigurationError(
                    f"build {name} is running (#{running}); drop it once it has finished"
                )
            exists = conn.execute(
                "select count(*) from pg_namespace where nspname = any(%s)", (list(schemas),)
            ).fetchone()[0]
            removed = _records(conn, "build_name = %s", (name,))
            if not exists and not removed:
                raise ConfigurationError(f"no build named {name!r} (sherliic-dbt builds lists them)")
            _drop_schemas(conn, name, schemas, waiting)
            conn.execute("delete from builds.builds where build_name = %s", (name,))
        finally:
            _unlock(conn, schema)
    for folder in ("target", "logs"):
        shutil.rmtree(project_dir / folder / "builds" / name, ignore_errors=True)
    return len(removed)


def _drop_schemas(
    conn: psycopg.Connection, name: str, schemas: tuple[str, ...], waiting: Callable[[str], None]
) -> None:
    """Drop `schemas` in one transaction, trying again while readers hold their relations."""
    told = False
    while True:
        try:
            with conn.transaction():
                conn.execute("set local lock_timeout = '1s'")
                for dropped in schemas:
                    conn.execute(sql.SQL("drop schema if exists {} cascade").format(sql.Identifier(dropped)))
            return
        except psycopg.errors.LockNotAvailable:
            if not told:
                relations = [
                    row[0]
                    for row in conn.execute(
                        "select format('%%I.%%I', n.nspname, c.relname) from pg_class as c "
                        "join pg_namespace as n on n.oid = c.relnamespace where n.nspname = any(%s)",
                        (list(schemas),),
                    )
                ]
                holders = conn.execute("select builds.lock_holders(%s)", (Jsonb(relations),)).fetchone()[0]
                waiting(f"readers of build {name}: {holders or 'sessions that have just ended'}")
                told = True
            time.sleep(0.5)


def schema_of(build_name: str) -> str:
    """The marts schema of a build name."""
    return MARTS_SCHEMA if build_name == DEFAULT_BUILD else NAMED_BUILD_SCHEMA_PREFIX + build_name


def check_same_build(existing: list[BuildRef], new: BuildRef, where: str) -> None:
    """Refuse (BuildMismatch, one line) to combine results of builds other than `new` with it in one
    report `where`."""
    others = sorted({ref.label for ref in existing if ref != new})
    if not others:
        return
    raise BuildMismatch(
        f"{where} holds results of build {', '.join(others)}, this run reads build {new.label}: one report "
        "shows one build; write this run elsewhere (--out) or rerun every method on one build"
    )
