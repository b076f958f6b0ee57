"""The one command-line style of every ``sherliic-*`` entry point (click).

Every command has ``--help`` (also ``-h``) and ``--version``; every command that touches the database takes
``--database-url`` (the library functions fall back to ``DATABASE_URL``, else the embedded server); a
user's mistake (bad input, no database, a missing file) ends as ONE ``error: …`` line on stderr with exit
code 2, never a traceback.

    @click.group(context_settings=CONTEXT)
    @version_option
    def cli() -> None: ...

    @cli.command()
    @database_url_option
    def init(database_url: str | None) -> None: ...

    def main(argv: list[str] | None = None) -> int:
        return run(cli, argv, prog_name="sherliic-x")
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from warehouse.engine import ENGINES
from warehouse.errors import DatabaseUnavailable, InputError, print_error

PACKAGE = "sherliic-warehouse"
USER_ERRORS = (InputError, DatabaseUnavailable, FileNotFoundError)
# -h as well as --help (the argparse CLIs had both); help text wrapped at 100 columns, not 80
CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

F = TypeVar("F", bound=Callable)


def package_version() -> str:
    try:
        return version(PACKAGE)
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


def version_option(function: F) -> F:
    """``--version``: prints ``<command> <version>``."""
    return click.version_option(package_version(), "--version", message="%(prog)s %(version)s")(function)


def _given_on_the_command_line(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """The option's value only when typed on the command line. A value click took from the environment
    becomes None: the library reads the same variable itself (``warehouse.server.database_url``,
    ``warehouse.engine.current_engine``), and an explicit URL would also mean "Postgres" to the functions
    that choose an engine, which SHERLIIC_ENGINE=spark plus a DATABASE_URL must not."""
    return value if ctx.get_parameter_source(param.name) == ParameterSource.COMMANDLINE else None


def database_url_option(function: F) -> F:
    """``--database-url URL`` (help names DATABASE_URL); the function receives ``database_url``: the URL
    typed on the command line, else None (= DATABASE_URL, else the embedded server)."""
    return click.option(
        "--database-url",
        "database_url",
        envvar="DATABASE_URL",
        show_envvar=True,
        default=None,
        metavar="URL",
        callback=_given_on_the_command_line,
        help="Postgres URL (default: DATABASE_URL, else the embedded server under .pgdata/).",
    )(function)


def engine_option(function: F) -> F:
    """``--engine postgres|spark`` (help names SHERLIIC_ENGINE, which click also validates); the function
    receives ``engine``: the engine typed on the command line, else None (= SHERLIIC_ENGINE, else
    postgres; Postgres when a --database-url is given)."""
    return click.option(
        "--engine",
        "engine",
        type=click.Choice(ENGINES, case_sensitive=False),
        envvar="SHERLIIC_ENGINE",
        show_envvar=True,
        default=None,
        callback=_given_on_the_command_line,
        help="Where the warehouse lives (default: SHERLIIC_ENGINE, else postgres).",
    )(function)


def json_object(ctx: click.Context, param: click.Parameter, value: str | None) -> dict | None:
    """Callback of an option taking a JSON object (dbt vars): the dict, or a usage error."""
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as error:
        raise click.BadParameter(f"not JSON: {error}") from None
    if not isinstance(parsed, dict):
        raise click.BadParameter(f"expected a JSON object such as '{{\"r_min\": 3}}', got {value!r}")
    return parsed


def check_engine_and_url(engine: str | None, database_url: str | None) -> None:
    """--engine spark with --database-url is a contradiction: the URL names a Postgres database."""
    if engine == "spark" and database_url:
        raise click.UsageError("--database-url names a Postgres database; it cannot go with --engine spark")


def run(
    command: click.Command,
    argv: list[str] | None = None,
    prog_name: str | None = None,
    user_errors: tuple[type[Exception], ...] = (),
) -> int:
    """Run a click command as a console script and return its exit code: click's own usage errors as
    click prints them (exit 2), the project's user errors (and a command's own `user_errors`, e.g.
    ValueError where the library reports bad arguments with it) as one line (exit 2)."""
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
    except (*USER_ERRORS, *user_errors) as exc:
        print_error(exc)
        return 2
    return result if isinstance(result, int) else 0
