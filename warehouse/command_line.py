"""The one command-line style of every ``sherliic-*`` entry point (click).

Every command has ``--help`` and ``--version``; every command that touches the database takes
``--database-url`` (default: ``DATABASE_URL``, else the embedded server); a user's mistake (bad input, no
database, a missing file) ends as ONE ``error: …`` line on stderr with exit code 2, never a traceback.

    @click.group()
    @version_option
    def cli() -> None: ...

    def main(argv: list[str] | None = None) -> int:
        return run(cli, argv, prog_name="sherliic-x")
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import TypeVar

import click

from warehouse.errors import DatabaseUnavailable, InputError, print_error

PACKAGE = "sherliic-warehouse"
USER_ERRORS = (InputError, DatabaseUnavailable, FileNotFoundError)

F = TypeVar("F", bound=Callable)

# platformdirs (via dbt/spaCy's dependencies) warns on every start when XDG_RUNTIME_DIR is unset (CI
# containers, ssh sessions); nothing a user can act on.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


def package_version() -> str:
    try:
        return version(PACKAGE)
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


def version_option(function: F) -> F:
    """``--version``: prints ``<command> <version>``."""
    return click.version_option(package_version(), "--version", message="%(prog)s %(version)s")(function)


def database_url_option(function: F) -> F:
    """``--database-url URL`` (envvar DATABASE_URL); the function receives ``database_url`` (None = the
    embedded server)."""
    return click.option(
        "--database-url",
        "database_url",
        envvar="DATABASE_URL",
        show_envvar=True,
        default=None,
        metavar="URL",
        help="Postgres URL (default: the embedded server under .pgdata/).",
    )(function)


def run(command: click.Command, argv: list[str] | None = None, prog_name: str | None = None) -> int:
    """Run a click command as a console script and return its exit code: click's own usage errors as
    click prints them (exit 2), the project's user errors as one line (exit 2)."""
    try:
        result = command.main(args=argv, prog_name=prog_name, standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort:
        print_error("aborted")
        return 130
    except USER_ERRORS as exc:
        print_error(exc)
        return 2
    return result if isinstance(result, int) else 0
