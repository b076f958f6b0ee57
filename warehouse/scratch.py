"""Scratch databases: a warehouse of its own for one benchmark run, on the same Postgres server as a
Target (the embedded server, or DATABASE_URL's), created empty with the raw schema and dropped after.

    with scratch_database(target, "sherliic_bench_1000000") as bench:   # a Target on the new database
        ...
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

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
