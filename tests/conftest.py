"""Shared fixtures: a real Postgres (the embedded server, or DATABASE_URL's) with throwaway databases."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import pytest

from warehouse import server
from warehouse.settings import shared_data_dir

os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")


@pytest.fixture(scope="session")
def make_database() -> Iterator[Callable[[], str]]:
    """Factory: a new empty database with the raw schema applied; all are dropped at session end."""
    server_was_running = (server.PGDATA / "postmaster.pid").exists()
    created: list[str] = []

    def factory() -> str:
        name = f"sherliic_test_{uuid.uuid4().hex[:10]}"
        server.create_database(name)
        created.append(name)
        url = server.server_url(name)
        server.apply_schema(url)
        return url

    yield factory
    for name in created:
        server.drop_database(name)
    if not server_was_running:
        server.stop_server()


@pytest.fixture(scope="session")
def db_url(make_database) -> str:
    """One database shared by a whole test session (tests must not assume it is empty)."""
    return make_database()


@pytest.fixture()
def fresh_db_url(make_database) -> str:
    """A database of this test's own."""
    return make_database()


@pytest.fixture(scope="session")
def shared_data():
    """../shared/data, or skip the test with a clear message when it is absent."""
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(f"shared data folder {path} is absent (set SHERLIIC_DATA); test needs the real data")
    return path
