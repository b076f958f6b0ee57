"""The one command-line style of every ``sherliic-*`` entry point (click).

Every command has ``--help`` (also ``-h``) and ``--version``; every command that touches the warehouse
takes ``--database-url`` (and ``--engine`` where both engines work) and receives ONE
:class:`~warehouse.target.Target` built from them and the environment (:func:`target_options`). Every
setting of the environment is checked before the command runs (:func:`check_settings`); a user's mistake
(bad input, a bad setting, no database, a missing file, a path the operating system refuses) ends as ONE
``error: …`` line on stderr with exit code 2, never a traceback; so does a usage error (an unknown
option, a missing argument: ``error: sherliic-x one: Missing argument 'NAME'.``), while ``--help`` prints
click's full help. The options of a group and of its subcommands may be given on either side of the
subcommand (:func:`place_options`): ``sherliic-extract list --quiet`` is ``sherliic-extract --quiet list``.

    @click.group(context_settings=CONTEXT)
    @version_option
    def cli() -> None: ...

    @cli.command()
    @target_options()
    def init(target: Target) -> None: ...

    def main(argv: list[str] | None = None) -> int:
        return run(cli, argv, prog_name="sherliic-x")
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from warehouse.errors import ConfigurationError, DatabaseUnavailable, InputError, Interrupted, print_error
from warehouse.interrupts import stop_on_signals
from warehouse.settings import check_environment
from warehouse.target import ENGINES, Target

PACKAGE = "sherliic-warehouse"
USER_ERRORS = (InputError, ConfigurationError, DatabaseUnavailable, FileNotFoundError)
# -h as well as --help (the argparse CLIs had both); help text wrapped at 100 columns, not 80
CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
# arguments that only print (help, version): they run whatever the environment holds
PRINT_ONLY = frozenset({"-h", "--help", "--version"})

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
    becomes None: :meth:`Target.from_environment` reads the same variable itself, and tells a URL typed
    beside ``--engine spark`` (a mistake) from SHERLIIC_ENGINE=spark beside a DATABASE_URL (the Postgres
    side of a Spark warehouse)."""
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


def build_option(function: F) -> F:
    """``--build NAME`` (help names SHERLIIC_BUILD); the function receives ``build``: the name typed on
    the command line, else None (= SHERLIIC_BUILD, else the default build)."""
    return click.option(
        "--build",
        "build",
        envvar="SHERLIIC_BUILD",
        show_envvar=True,
        default=None,
        metavar="NAME",
        callback=_given_on_the_command_line,
        help="The named build whose marts to use (`sherliic-dbt builds` lists them; default: SHERLIIC_BUILD, "
        "else the default build, schema warehouse).",
    )(function)


class OutputPath(click.Path):
    """A path a command writes (``--out``). A broken symbolic link in it (the path itself or a folder
    above it) is a usage error naming the link and where it points, instead of the bare "File exists"
    that creating the folder would raise."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        for part in (Path(path), *Path(path).parents):
            if part.is_symlink() and not part.exists():
                self.fail(
                    f"{part} is a broken symbolic link to {os.readlink(part)}; create what it points to, "
                    "or remove the link",
                    param,
                    ctx,
                )
        return path


OUTPUT_FOLDER = OutputPath(file_okay=False, path_type=Path)  # --out FOLDER
OUTPUT_FILE = OutputPath(dir_okay=False, path_type=Path)  # --out FILE


class SuggestingChoice(click.Choice):
    """A click Choice whose refusal ends with the choice the user probably meant: the name an `aliases`
    entry gives (names other tools use for a choice: ``docbin`` for ``spacy``) or the closest spelling
    (``--format jsnol``: did you mean jsonl?)."""

    def __init__(self, choices: Sequence[str], aliases: Mapping[str, str] | None = None) -> None:
        super().__init__(choices)
        self.aliases = dict(aliases or {})

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as refused:
            given = str(value).strip().lower()
            close = difflib.get_close_matches(given, [str(c) for c in self.choices], n=1, cutoff=0.6)
            guess = self.aliases.get(given) or (close[0] if close else None)
            if guess is None:
                raise
            self.fail(f"{refused.message.rstrip('.')}; did you mean {guess}?", param, ctx)


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


def target_options(*, engines: tuple[str, ...] = ("postgres",), build: bool = False) -> Callable[[F], F]:
    """``--database-url`` (and ``--engine`` when `engines` names both, ``--build`` when `build`, for the
    commands that read a build's marts): the function receives ONE ``target`` (:class:`Target`) built
    from them and the environment, checked before it runs."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def with_target(
            *args: Any,
            database_url: str | None,
            engine: str | None = None,
            build: str | None = None,
            **kwargs: Any,
        ) -> Any:
            target = Target.from_environment(engine=engine, database_url=database_url, build=build)
            if target.engine not in engines:
                raise ConfigurationError(
                    f"this command works on {' or '.join(engines)} only, not on {target.engine} "
                    "(SHERLIIC_ENGINE)"
                )
            target.require_installed()
            return function(*args, target=target, **kwargs)

        command = database_url_option(with_target)
        if build:
            command = build_option(command)
        return engine_option(command) if len(engines) > 1 else command

    return decorate


def check_settings(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> None:
    """Every setting of `environ` (default this process's), checked before a command runs: the SHERLIIC_*
    names (:func:`warehouse.settings.check_environment`), then the Target's values (engine, DATABASE_URL,
    build, Spark settings) as :meth:`Target.from_environment` reads them. A ``--database-url`` or
    ``--build`` among `argv` wins over DATABASE_URL or SHERLIIC_BUILD, which is then not checked."""
    environ = os.environ if environ is None else environ
    check_environment(environ)
    overridden = {
        variable
        for flag, variable in (("--database-url", "DATABASE_URL"), ("--build", "SHERLIIC_BUILD"))
        if any(arg == flag or arg.startswith(flag + "=") for arg in argv)
    }
    Target.from_environment({name: value for name, value in environ.items() if name not in overridden})


def _options_by_flag(command: click.Command) -> dict[str, click.Option]:
    """Every flag of `command`'s options (``--quiet``, ``--no-x``, ``-q``) -> the option."""
    return {
        flag: param
        for param in command.params
        if isinstance(param, click.Option)
        for flag in (*param.opts, *param.secondary_opts)
    }


def _option_length(arg: str, option: click.Option | None) -> int:
    """How many arguments ``arg`` (a flag) and its values take: 1 for a flag or ``--name=value``."""
    if option is None or option.is_flag or option.count or "=" in arg:
        return 1
    return 1 + option.nargs


def place_options(command: click.Command, args: list[str]) -> list[str]:
    """`args` with each option moved to the side of the subcommand where it is accepted.

    A group's options (``--quiet`` of sherliic-extract) typed after the subcommand move before it; a
    subcommand's options (``--database-url``, ``--build`` of sherliic-baselines all) typed before it move
    after it. An option both accept, or neither (click then reports it), stays where it is; nothing after
    ``--`` moves. Groups nested in groups are handled the same way, level by level."""
    if not isinstance(command, click.Group):
        return args
    group_flags = _options_by_flag(command)
    # the subcommand: the first of the group's command names not taken as a value of the group's options
    i = 0
    while i < len(args) and args[i] != "--" and args[i] not in command.commands:
        flag = args[i].split("=", 1)[0]
        i += _option_length(args[i], group_flags.get(flag)) if flag in group_flags else 1
    if i >= len(args) or args[i] == "--":
        return args  # no subcommand (--help, a usage error): click reports it as typed
    name, sub = args[i], command.commands[args[i]]
    sub_flags = _options_by_flag(sub)
    head: list[str] = []  # for the group
    tail: list[str] = []  # for the subcommand
    moved: list[str] = []  # the subcommand's options typed before it
    k = 0
    while k < i:  # before the subcommand: the group's options stay, the subcommand's move after it
        flag = args[k].split("=", 1)[0]
        if args[k].startswith("-") and flag not in group_flags and flag in sub_flags:
            length = _option_length(args[k], sub_flags[flag])
            moved += args[k : k + length]
        else:
            length = _option_length(args[k], group_flags.get(flag)) if args[k].startswith("-") else 1
            head += args[k : k + length]
        k += length
    k = i + 1
    while k < len(args):  # after it: the group's options move before it, the rest stays
        arg = args[k]
        if arg == "--":
            tail += args[k:]
            break
        flag = arg.split("=", 1)[0]
        if arg.startswith("-") and flag not in sub_flags and flag in group_flags:
            length = _option_length(arg, group_flags[flag])
            head += args[k : k + length]
        else:
            length = _option_length(arg, sub_flags.get(flag)) if arg.startswith("-") else 1
            tail += args[k : k + length]
        k += length
    return [*head, name, *moved, *place_options(sub, tail)]


def run(
    command: click.Command,
    argv: list[str] | None = None,
    prog_name: str | None = None,
    user_errors: tuple[type[Exception], ...] = (),
    *,
    signals: bool = False,
) -> int:
    """Run a click command as a console script and return its exit code: the environment's settings
    checked first (:func:`check_settings`; not for --help/--version), options placed on the side of the
    subcommand that takes them (:func:`place_options`), click's usage errors as one line (exit 2), the
    project's user errors, operating-system errors on the user's paths (and a
    command's own `user_errors`, e.g. ValueError where the library reports bad arguments with it) as one
    line (exit 2). signals: SIGINT and SIGTERM stop the command cleanly (:func:`stop_on_signals`; one
    line, exit 130/143)."""
    args = place_options(command, list(sys.argv[1:] if argv is None else argv))
    try:
        if not PRINT_ONLY.intersection(args):
            check_settings(args)
        with stop_on_signals() if signals else nullcontext():
            result = command.main(args=args, prog_name=prog_name, standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:  # one line, not click's usage block (--help shows that)
        where = exc.ctx.command_path if exc.ctx is not None else prog_name
        print_error(f"{where}: {exc.format_message()}" if where else exc.format_message())
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort as exc:  # click's wrapper of a KeyboardInterrupt (Ctrl-C, or stop_on_signals)
        if isinstance(exc.__cause__, Interrupted):
            print_error(exc.__cause__)
            return exc.__cause__.exit_code
        print_error("aborted")
        return 130
    except Interrupted as exc:  # a signal outside the command itself (after it returned)
        print_error(exc)
        return exc.exit_code
    except (*USER_ERRORS, OSError, *user_errors) as exc:
        print_error(exc)
        return 2
    return result if isinstance(result, int) else 0
