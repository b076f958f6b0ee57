"""Scratch databases: a warehouse of its own for one benchmark run, on the same Postgres server as a
Target (the embedded server, or DATABASE_URL's), created empty with the raw schema and dropped after.

    with scratch_database(target, "sherliic_bench_1000000") as bench:   # a Target on the new database
        ...

    with database_snapshot(bench) as restore:   # a copy of it, to measure one step several times
        ...; restore(); ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from urllib.parse import urlparse

from warehouse import server
from warehouse.target import Target


def _server_url(target: Target) -> str:
    """A URL of the Target's Postgres server (its database part is replaced by the caller)."""
    if target.database_url is not None:
        return target.database_url
    return server.embedded_server_url(target.pgdata)


@contextmanager
def scratch_database(target: Target, name: str, *, keep: bool = False) -> Iterator[Target]:
    """A Target on a new empty database `name` (with the raw schema) of the Target's Postgres server; a
    database of that name left by an earlier run is dropped first. Dropped at the end unless `keep`. The
    Target's other settings (Spark, build) carry over; its engine is Postgres."""
    server_url = _server_url(target)
    server.drop_database(server_url, name)
    server.create_database(server_url, name)
    scratch = replace(target, engine="postgres", database_url=server.with_database(server_url, name))
    try:
        scratch.ensure_schema()
        yield scratch
    finally:
        if not keep:
            server.drop_database(server_url, name)


@contextmanager
def database_snapshot(target: Target) -> Iterator[Callable[[], None]]:
    """A copy of the Target's database (`create database … template`, on the same server); the function it
    yields puts the database back as it was when the copy was taken. The copy is dropped at the end. For
    scratch databases: nobody else may be connected to the database while it is copied or put back."""
    server_url = _server_url(target)
    name = urlparse(target.url()).path.lstrip("/")
    copy = f"{name}__snapshot"
    server.drop_database(server_url, copy)
    server.create_database(server_url, copy, template=name)

    def restore() -> None:
        server.drop_database(server_url, name)
        server.create_database(server_url, name, template=copy)

    try:
        yield restore
    finally:
        server.drop_database(server_url, copy)
