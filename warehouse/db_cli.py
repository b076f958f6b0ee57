"""`sherliic-db`: start, stop and open the project's database (the embedded server or DATABASE_URL's)."""

from __future__ import annotations

import os
import subprocess
import sys

import click

from warehouse import server
from warehouse.command_line import CONTEXT, run, target_options, version_option
from warehouse.errors import print_error
from warehouse.target import Target


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
@target_options()
def start(target: Target) -> None:
    """Start the server; create the database and its schemas.

    The embedded server starts unless a URL is given (--database-url, DATABASE_URL); the database and its
    raw and results schemas are created or updated."""
    _prepare(target)


@cli.command()
@target_options()
def init(target: Target) -> None:
    """Create or update the schemas (the same as `start`)."""
    _prepare(target)


def _prepare(target: Target) -> None:
    server.apply_schema(target.url())
    print(f"database ready: {server.redact(target.url())}")


@cli.command()
def stop() -> None:
    """Stop the embedded server.

    Nothing to do when DATABASE_URL names another server."""
    target = Target.from_environment()
    if target.database_url is None:
        server.stop_embedded_server(target.pgdata)


@cli.command()
@click.option("--show-password", is_flag=True, help="Print the password too (default: ***).")
@target_options()
def url(show_password: bool, target: Target) -> int:
    """Print the database URL (never starts a server).

    The URL given (--database-url, DATABASE_URL), else the embedded server's; its password shows as ***
    unless --show-password. A stopped embedded server has no URL yet (its socket folder is chosen when it
    starts): then nothing is printed on stdout, one line on stderr says so, and the exit code is 1."""
    if target.database_url is not None:
        print(target.database_url if show_password else server.redact(target.database_url))
        return 0
    running = server.running_server_url(target.pgdata)
    if running is None:
        print_error(
            f"the embedded server ({target.pgdata}) is not running; start it with `sherliic-db start`"
        )
        return 1
    print(running if show_password else server.redact(running))
    return 0


@cli.command(context_settings={"ignore_unknown_options": True})
@target_options()
@click.argument("psql_args", nargs=-1, type=click.UNPROCESSED)
def psql(target: Target, psql_args: tuple[str, ...]) -> int:
    """Open psql on the database; PSQL_ARGS go to psql.

    Starts the embedded server if needed (unless a URL is given)."""
    url, password = server.split_password(target.url())  # never on psql's command line (ps shows it)
    env = {**os.environ, "PGPASSWORD": password} if password else None
    return subprocess.call([str(server.psql_executable()), url, *psql_args], env=env)


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="sherliic-db")


if __name__ == "__main__":
    sys.exit(main())
