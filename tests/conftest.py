"""Shared fixtures: a real Postgres (the embedded server, or DATABASE_URL's) with throwaway databases."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from psycopg import sql
from xdist.scheduler import LoadScopeScheduling

from lm import models
from warehouse import server
from warehouse.settings import shared_data_dir
from warehouse.target import Target

os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")
STARTED_SERVER = pytest.StashKey[bool]()
# `make test-fast` (marker `fast`): the tests with no database of their own, no Spark session and no
# language model, and those on one small dbt build (test_dbt_build.py's hand-computed graph, `built`)
DATABASE_FIXTURES = frozenset({"make_target", "db_target", "fresh_target", "fresh_target_of"})
SMALL_BUILD = ("test_dbt_build.py", "built")


def is_fast(item: pytest.Item) -> bool:
    fixtures = set(item.fixturenames)
    if item.path.name == SMALL_BUILD[0]:
        return SMALL_BUILD[1] in fixtures
    heavy = is_spark_module(item.path.name) or item.path.name.startswith("test_lm")
    return not heavy and not DATABASE_FIXTURES & fixtures


def pytest_configure(config: pytest.Config) -> None:
    """The embedded server is started once, before the tests (`make test` runs them in two xdist workers,
    which share it), and stopped at the end when this run started it. Each worker's dbt runs get target and
    log folders of their own (dbt writes its manifest and partial-parse cache there)."""
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker is not None:
        os.environ.setdefault("DBT_TARGET_PATH", f"target/pytest-{worker}")
        os.environ.setdefault("DBT_LOG_PATH", f"logs/pytest-{worker}")
        return
    environment = Target.from_environment()
    if environment.database_url is None:
        config.stash[STARTED_SERVER] = not server.embedded_server_running(environment.pgdata)
        server.embedded_server_url(environment.pgdata)  # starts it


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(STARTED_SERVER, False):
        server.stop_embedded_server(Target.from_environment().pgdata)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks the `fast` tests (is_fast). `make test`'s workers take whole scopes (SparkTogether) in this
    order: the Spark modules, the
    cluster's first (the longest); then the modules with a slow test; then the rest in file order, so
    that the last scopes handed out are short ones."""
    weights: dict[str, int] = {}
    for item in items:
        if is_fast(item):
            item.add_marker(pytest.mark.fast)
        module = item.module.__name__
        marks = {mark.name for mark in item.iter_markers()}
        if "cluster" in marks:
            weight = 0
        elif is_spark_module(item.path.name):
            weight = 1
        else:
            weight = 2 if "slow" in marks else 3
        weights[module] = min(weights.get(module, weight), weight)
    items.sort(key=lambda item: weights[item.module.__name__])


def is_spark_module(file_name: str) -> bool:
    return file_name.startswith("test_spark_")


class SparkTogether(LoadScopeScheduling):
    """xdist's --dist loadscope (each module a unit of work, given whole to one worker), except that all
    the modules that start Spark are one unit: they run one after another on one worker, since a second
    Spark JVM beside the cluster's made both twice as slow on two cores."""

    def _split_scope(self, nodeid: str) -> str:
        module = super()._split_scope(nodeid)
        return "spark" if is_spark_module(Path(module).name) else module


def pytest_xdist_make_scheduler(config: pytest.Config, log) -> LoadScopeScheduling | None:
    return SparkTogether(config, log) if config.getvalue("dist") == "loadscope" else None


@pytest.fixture(scope="session")
def make_target() -> Iterator[Callable[..., Target]]:
    """Factory: a Target on a new empty database with the raw schema applied (on the embedded server, or
    DATABASE_URL's), or with `template`, a copy of that Target's database (nobody may be connected to it
    meanwhile); all are dropped at session end."""
    environment = Target.from_environment()
    if environment.database_url is not None:
        server_url = environment.database_url
    else:
        server_url = server.embedded_server_url(environment.pgdata)
    created: list[str] = []

    def factory(template: Target | None = None) -> Target:
        name = f"sherliic_test_{uuid.uuid4().hex[:10]}"
        source = None if template is None else server.connection_parts(template.url())["dbname"]
        server.create_database(server_url, name, template=source)
        created.append(name)
        # throwaway data: commits need not wait for the disk (a slow disk would slow every test)
        with server.connect(server.with_database(server_url, "postgres"), autocommit=True) as conn:
            setting = sql.SQL("alter database {} set synchronous_commit = off")
            conn.execute(setting.format(sql.Identifier(name)))
        target = Target.postgres(server.with_database(server_url, name))
        if template is None:
            server.apply_schema(target.url())
        return target

    yield factory
    for name in created:
        server.drop_database(server_url, name)


@pytest.fixture(scope="session")
def db_target(make_target) -> Target:
    """One database shared by a whole test session (tests must not assume it is empty)."""
    return make_target()


@pytest.fixture()
def fresh_target_of(make_target) -> Iterator[Callable[..., Target]]:
    """Factory like make_target, whose databases are this test's own, dropped when the test ends (the
    server keeps few databases)."""
    made: list[Target] = []

    def factory(template: Target | None = None) -> Target:
        made.append(make_target(template=template))
        return made[-1]

    yield factory
    for target in made:
        server.drop_database(target.url(), server.connection_parts(target.url())["dbname"])


@pytest.fixture()
def fresh_target(fresh_target_of) -> Target:
    """A database of this test's own, dropped when the test ends."""
    return fresh_target_of()


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
