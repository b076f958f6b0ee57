"""Build records (Postgres, table builds.builds; docs/design.md §2): what every `sherliic-dbt run`/`build`
built, from what, with which code, and how it ended.

:mod:`warehouse.dbt` writes them around dbt: :func:`start_record` (inputs, vars, code, versions) once it
holds the build's lock (:func:`build_lock`), :func:`mark_cancelled` on a signal, :func:`finish_record`
at the end. The publish itself (dbt_project/macros/atomic_publish.sql) marks the record published in the
transaction that moves the marts, so a record says published exactly when its marts are the live ones.

Readers: :func:`current_build` (the record behind a Target's marts: results, reports, exports and
annotation batches name it), :func:`list_builds`, :func:`find_build`, :func:`drop_build`;
comparing and listing them: warehouse/builds_cli.py (`sherliic-dbt builds`).
"""

from __future__ import annotations

import json
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
from warehouse.target import DEFAULT_BUILD, MARTS_SCHEMA, NAMED_BUILD_SCHEMA_PREFIX, Target

LOCK_NAMESPACE = "sherliic-build"  # advisory lock (namespace, schema): one build of a schema at a time
STATUSES = ("running", "succeeded", "failed", "cancelled")
STALE_ERROR = "the sherliic-dbt process ended without recording an outcome (killed)"


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
        }


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


# -- what a build is made of ---------------------------------------------------------------------------


def _names(value: Any) -> list[str] | None:
    """A corpora/type_sources var as a list of names (None: every one)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    # a malformed value (dbt refuses it before any model runs): the build reads nothing
    return [v for v in value if isinstance(v, str)] if isinstance(value, list | tuple) else []


def build_inputs(conn: psycopg.Connection, dbt_vars: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    """The loaded batches the vars select: (corpora with their batches, type tables). Type maps count
    only with map_types; types batches only of the sources type_sources names."""
    corpora, sources = _names(dbt_vars.get("corpora")), _names(dbt_vars.get("type_sources"))
    with conn.cursor(row_factory=dict_row) as cur:
        batches = cur.execute(
            """
            select corpus_name, batch_id, source_file, source_format, checksum, n_documents, n_instances,
                finished_at, options ->> 'parser' as parser
            from raw.load_batches
            where kind = 'corpus' and status = 'loaded' and (%(all)s or corpus_name = any(%(names)s))
            order by corpus_name, batch_id
            """,
            {"all": corpora is None, "names": corpora or []},
        ).fetchall()
        types = cur.execute(
            """
            select batch_id, kind, options ->> 'type_source' as type_source, source_file, source_format,
                checksum, n_rows, finished_at
            from raw.load_batches
            where status = 'loaded' and (
                (kind = 'types' and (%(all)s or options ->> 'type_source' = any(%(sources)s)))
                or (kind = 'type_map' and %(map_types)s)
            )
            order by batch_id
            """,
            {
                "all": sources is None,
                "sources": sources or [],
                "map_types": dbt_vars.get("map_types") is True,
            },
        ).fetchall()
    by_corpus: dict[str, list[dict]] = {}
    for batch in batches:
        name = batch.pop("corpus_name")
        by_corpus.setdefault(name, []).append(_jsonable(batch))
    return [{"corpus": name, "batches": rows} for name, rows in by_corpus.items()], [
        _jsonable(row) for row in types
    ]


def json_safe(value: Any) -> Any:
    """`value` as JSON Postgres stores: NaN and infinities (a var may be one; dbt refuses it) and values
    JSON has no type for (a YAML date) as strings."""
    return json.loads(json.dumps(value, default=str), parse_constant=str)


def _jsonable(row: dict) -> dict:
    return {key: _iso(value) if isinstance(value, datetime) else value for key, value in row.items()}


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


def mart_names(project_dir: Path = DBT_PROJECT_DIR) -> list[str]:
    """The marts the dbt project defines (models/marts/<area>/<name>.sql)."""
    return sorted(path.stem for path in (project_dir / "models" / "marts").glob("*/*.sql"))


def mart_row_counts(
    conn: psycopg.Connection,
    schema: str,
    project_dir: Path = DBT_PROJECT_DIR,
    known: dict[str, int] | None = None,
) -> dict[str, int]:
    """Rows of every mart present in `schema`; those in `known` (the rows dbt reported for the tables the
    build created, recorded when it published: macros/atomic_publish.sql) are not counted again."""
    counts: dict[str, int] = dict(known or {})
    for name in mart_names(project_dir):
        if name in counts:
            continue
        qualified = f"{schema}.{name}"
        if conn.execute("select to_regclass(%s)", (qualified,)).fetchone()[0] is None:
            continue
        query = sql.SQL("select count(*) from {}.{}").format(sql.Identifier(schema), sql.Identifier(name))
        counts[name] = conn.execute(query).fetchone()[0]
    return counts


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
        "select build_id, wrapper_pid, started_at from builds.builds "
        "where schema_name = %s and status = 'running' order by build_id desc limit 1",
        (schema,),
    ).fetchone()
    if row is None:
        return f"another build of schema {schema} is running"
    return f"build #{row[0]} of schema {schema} is running (pid {row[1]}, since {row[2]:%Y-%m-%d %H:%M:%S})"


def mark_stale(conn: psycopg.Connection, schema: str) -> int:
    """Records of `schema` still `running` while its lock is held here: their process died without
    finishing them. Marked failed; returns how many."""
    return conn.execute(
        "update builds.builds set status = 'failed', error = %s, finished_at = coalesce(finished_at, now()) "
        "where schema_name = %s and status = 'running'",
        (STALE_ERROR, schema),
    ).rowcount


def start_record(
    conn: psycopg.Connection, target: Target, command: str, dbt_vars: dict[str, Any], pid: int
) -> int:
    """A `running` record of the Target's build, with its inputs, vars, code and versions; its id."""
    corpora, type_tables = build_inputs(conn, dbt_vars)
    commit, dirty = code_version()
    row = conn.execute(
        """
        insert into builds.builds (
            build_name, schema_name, engine, command, vars, corpora, type_tables, git_commit, git_dirty,
            versions, wrapper_pid
        ) values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
        returning build_id
        """,
        (
            target.build_name,
            target.marts_schema,
            target.engine,
            command,
            Jsonb(json_safe(dbt_vars)),
            Jsonb(corpora),
            Jsonb(type_tables),
            commit,
            dirty,
            Jsonb(tool_versions(target.engine)),
            pid,
        ),
    ).fetchone()
    return row[0]


def mark_cancelled(conn: psycopg.Connection, build_id: int) -> bool:
    """Mark a running build cancelled, unless its publish came first (then False: the marts are this
    build's). Waits for a publish in progress (it holds the record's row lock)."""
    return (
        conn.execute(
            "update builds.builds set status = 'cancelled', finished_at = now() "
            "where build_id = %s and published_at is null and status = 'running'",
            (build_id,),
        ).rowcount
        == 1
    )


def finish_record(
    conn: psycopg.Connection,
    build_id: int,
    *,
    status: str,
    exit_code: int,
    error: str | None = None,
    row_counts: dict[str, int] | None = None,
) -> None:
    conn.execute(
        "update builds.builds set status = %s, exit_code = %s, error = %s, row_counts = %s, "
        "finished_at = coalesce(finished_at, now()) where build_id = %s",
        (status, exit_code, error, Jsonb(row_counts or {}), build_id),
    )


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
    """Every record, oldest first (records left `running` by a killed process are marked failed)."""
    with target.on_postgres().connect(autocommit=True) as conn:
        for schema in {r.schema_name for r in _records(conn, "status = 'running'")}:
            if _try_lock(conn, schema):  # nobody builds it: its running records are stale
                mark_stale(conn, schema)
                _unlock(conn, schema)
        return _records(conn)


def current_build(target: Target, mart: str = "inference_candidates") -> BuildRecord | None:
    """The record of the build whose `mart` is live in the Target's marts schema (None: none recorded,
    e.g. built by plain dbt or before builds were recorded)."""
    if target.engine != "postgres":
        return None
    with target.connect() as conn:
        found = _records(
            conn,
            "schema_name = %s and published_at is not null and published_models ? %s",
            (target.marts_schema, mart),
        )
    return found[-1] if found else None


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
    published = [r for r in named if r.published_at is not None]
    return (published or named)[-1]


def drop_build(target: Target, name: str, project_dir: Path = DBT_PROJECT_DIR) -> int:
    """Drop a named build: its schema (and a staging schema left behind), its records and its dbt target
    folder; refused while it builds. Returns the number of records removed."""
    if name == DEFAULT_BUILD:
        raise ConfigurationError(
            "the default build (schema warehouse) is not dropped; rebuild it, or name the build to drop"
        )
    named = target.with_build(name)  # checks the name
    schema = named.marts_schema
    with named.connect(autocommit=True) as conn:
        if not _try_lock(conn, schema):
            raise ConfigurationError(f"build {name} is running; drop it once it has finished")
        try:
            exists = conn.execute(
                "select count(*) from pg_namespace where nspname in (%s, %s)", (schema, schema + "__next")
            ).fetchone()[0]
            removed = _records(conn, "build_name = %s", (name,))
            if not exists and not removed:
                raise ConfigurationError(f"no build named {name!r} (sherliic-dbt builds lists them)")
            with conn.transaction():
                for dropped in (schema, schema + "__next"):
                    conn.execute(sql.SQL("drop schema if exists {} cascade").format(sql.Identifier(dropped)))
                conn.execute("delete from builds.builds where build_name = %s", (name,))
        finally:
            _unlock(conn, schema)
    for folder in ("target", "logs"):
        shutil.rmtree(project_dir / folder / "builds" / name, ignore_errors=True)
    return len(removed)


def schema_of(build_name: str) -> str:
    """The marts schema of a build name."""
    return MARTS_SCHEMA if build_name == DEFAULT_BUILD else NAMED_BUILD_SCHEMA_PREFIX + build_name


# what to change when a funnel step removed the last candidates (its var in candidate_funnel)
FUNNEL_ADVICE = {
    "corpora": "select corpora with relation instances, or load one (sherliic-extract corpus)",
    "r_min": "lower r_min",
    "type_sources": "widen type_sources (null: every source) or set map_types",
    "min_relv": "lower min_relv",
    "min_sigma": "lower min_sigma",
    "min_esr": "lower min_esr",
    "top_n_premises": "raise top_n_premises",
}


def zero_candidates_hint(
    conn: psycopg.Connection, schema: str, rerun: str = "sherliic-dbt run"
) -> str | None:
    """For a build without InfCands: the funnel step that removed the last ones and the dbt var to change
    (mart candidate_funnel of `schema`); None without the mart."""
    if conn.execute("select to_regclass(%s)", (f"{schema}.candidate_funnel",)).fetchone()[0] is None:
        return None
    query = sql.SQL(
        "select step_number, step, counted, n_rows, var_name, var_value from {}.candidate_funnel "
        "order by step_number"
    ).format(sql.Identifier(schema))
    steps = conn.execute(query).fetchall()
    previous = None
    for _, step, counted, n_rows, var_name, var_value in steps:
        if n_rows == 0:
            before = "" if previous is None else f" ({previous[1]:,} {previous[0]} before it)"
            advice = FUNNEL_ADVICE.get(var_name, f"change {var_name}")
            return (
                f"0 inference candidates: step {step} left no {counted}{before}; dbt var {var_name} = "
                f"{var_value}: {advice}, e.g. {rerun} --vars '{{{var_name}: ...}}' "
                f"(mart {schema}.candidate_funnel has every step)"
            )
        previous = (counted, n_rows)
    return None


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
