"""Shared fixtures: a real Postgres (the embedded server, or DATABASE_URL's) with throwaway databases."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from baselines.lm import models
from warehouse import server
from warehouse.settings import shared_data_dir
from warehouse.target import Target

os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")


@pytest.fixture(scope="session")
def make_target() -> Iterator[Callable[[], Target]]:
    """Factory: a Target on a new empty database with the raw schema applied (on the embedded server, or
    DATABASE_URL's); all are dropped at session end."""
    environment = Target.from_environment()
    server_was_running = server.embedded_server_running(environment.pgdata)
    if environment.database_url is not None:
        server_url = environment.database_url
    else:
        server_url = server.embedded_server_url(environment.pgdata)
    created: list[str] = []

    def factory() -> Target:
        name = f"sherliic_test_{uuid.uuid4().hex[:10]}"
        server.create_database(server_url, name)
        created.append(name)
        target = Target.postgres(server.with_database(server_url, name))
        server.apply_schema(target.url())
        return target

    yield factory
    for name in created:
        server.drop_database(server_url, name)
    if environment.database_url is None and not server_was_running:
        server.stop_embedded_server(environment.pgdata)


@pytest.fixture(scope="session")
def db_target(make_target) -> Target:
    """One database shared by a whole test session (tests must not assume it is empty)."""
    return make_target()


@pytest.fixture()
def fresh_target(make_target) -> Target:
    """A database of this test's own."""
    return make_target()


@pytest.fixture(scope="session")
def shared_data():
    """../shared/data, or skip the test with a clear message when it is absent."""
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(f"shared data folder {path} is absent (set SHERLIIC_DATA); test needs the real data")
    return path


@pytest.fixture(scope="session")
def lm_cache(tmp_path_factory) -> Path:
    """The LM tests' cache folder (ONNX exports, bench weights) sharing the unpacked models."""
    cache = tmp_path_factory.mktemp("lm-cache")
    (cache / "models").symlink_to(models.model_dir("minilm").parent, target_is_directory=True)
    return cache
