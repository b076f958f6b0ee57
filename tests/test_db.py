"""The database layer: embedded server, DATABASE_URL override, idempotent raw schema, dbt profile env."""

from __future__ import annotations

import psycopg
import pytest

from warehouse import server


def test_apply_schema_is_idempotent(fresh_db_url):
    server.apply_schema(fresh_db_url)
    server.apply_schema(fresh_db_url)
    with psycopg.connect(fresh_db_url) as conn:
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


def test_database_url_override(monkeypatch, fresh_db_url):
    monkeypatch.setenv("DATABASE_URL", fresh_db_url)
    assert server.database_url() == fresh_db_url
    with server.connect() as conn:
        current = conn.execute("select current_database()").fetchone()[0]
    assert current == server.connection_parts(fresh_db_url)["dbname"]


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
    env = server.dbt_env(url)
    assert env["SHERLIIC_DB_HOST"] == expected["host"]
    assert env["SHERLIIC_DB_NAME"] == expected["dbname"]
    assert env["DBT_SEND_ANONYMOUS_USAGE_STATS"] == "False"


def test_sqlalchemy_url_uses_psycopg3_driver():
    assert server.sqlalchemy_url("postgresql://u@/d?host=/s") == "postgresql+psycopg://u@/d?host=/s"
