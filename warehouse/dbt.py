"""Run dbt on a Target's warehouse: Postgres (embedded by default, DATABASE_URL otherwise) or the Spark
catalog (dbt target `spark`); record every build (warehouse/builds.py).

A build (`dbt run`/`build`/`seed` on Postgres) runs under the advisory lock of its schema (a second
build of the same schema waits, with one line saying which build it waits for; builds of other names
run side by side), with a record in builds.builds, and ends with one line saying how it ended. dbt runs
in its own process group and dies with this process: SIGINT and SIGTERM reach this process, which
marks the record cancelled (so that the publish refuses to run: macros/atomic_publish.sql), passes
SIGINT on to dbt (dbt's graceful stop: it cancels its queries), waits for it, and exits 130 / 143.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click

from warehouse import builds
from warehouse.builds_cli import builds_command
from warehouse.command_line import CONTEXT, package_version, run, target_options
from warehouse.dbt_vars import dbt_command, resolve_vars
from warehouse.settings import DBT_PROJECT_DIR
from warehouse.target import ENGINES, Target

PUBLISHING = frozenset({"run", "build", "seed"})  # commands that publish marts: locked and recorded
# what a received signal becomes for dbt, by how many came before it: a graceful stop, then harder
ESCALATION = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)
TAIL_LINES = 400  # dbt's last output lines kept to name the error of a failed build


def _installed(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def dbt_executable() -> str:
    candidate = Path(sys.executable).parent / "dbt"
    return str(candidate) if candidate.exists() else "dbt"


def run_dbt(
    target: Target,
    args: list[str],
    dbt_vars: dict | None = None,
    check: bool = True,
    project_dir: Path = DBT_PROJECT_DIR,
    env: dict[str, str] | None = None,
) -> int:
    """Run `dbt <args>` in dbt_project/ (or another `project_dir`) on the Target's warehouse and build;
    dbt vars are passed as JSON. Var names are checked here (an unknown one is one ConfigurationError
    line), their values by the project before any model runs (macros/validate_vars.sql). A command that
    publishes marts is a recorded build (module doc). `env`: extra variables for dbt's process."""
    if "--help" in args or "-h" in args:  # dbt's own help needs no warehouse: start no server for it
        return subprocess.run(
            _command(target, args, dbt_vars, project_dir),
            env={**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "False"},
            cwd=project_dir,
        ).returncode
    resolved = resolve_vars(project_dir, args, dbt_vars)
    dbt_env = {**target.dbt_env(), **(env or {})}  # a named build on Spark is refused here, in one line
    # Postgres: dbt's sources must exist even before the first extraction. Spark: the loaders
    # create the raw tables; a second JVM here would also hold the one-process Derby metastore
    target.ensure_schema()
    command = _command(target, args, dbt_vars, project_dir)
    with CaughtSignals() as signals:
        if dbt_command(args) in PUBLISHING and target.engine == "postgres":
            code = _recorded_build(target, args, resolved, command, dbt_env, project_dir, signals)
        else:
            code = run_child(command, dbt_env, project_dir, signals).exit_code
    if check and code != 0:
        raise RuntimeError(f"dbt {' '.join(args)} failed with exit code {code}")
    return code


def dbt_output(
    target: Target, args: list[str], dbt_vars: dict | None = None, project_dir: Path = DBT_PROJECT_DIR
) -> str:
    """The standard output of `dbt <args>`, a command that publishes nothing (e.g. `compile --inline`),
    on the Target's warehouse; a failure raises RuntimeError with dbt's output."""
    if dbt_command(args) in PUBLISHING:
        raise ValueError(f"dbt {dbt_command(args)} publishes marts: run it with run_dbt")
    resolve_vars(project_dir, args, dbt_vars)
    done = subprocess.run(
        _command(target, args, dbt_vars, project_dir),
        env=target.dbt_env(),
        cwd=project_dir,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"dbt {' '.join(args)} failed with exit code {done.returncode}:\n{done.stdout}")
    return done.stdout


def _command(target: Target, args: list[str], dbt_vars: dict | None, project_dir: Path) -> list[str]:
    project = str(project_dir)
    command = [dbt_executable(), *args, "--project-dir", project, "--profiles-dir", project]
    if "--target" not in args and "-t" not in args:
        command += ["--target", target.dbt_target]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars)]
    return command


# -- the child process ---------------------------------------------------------------------------------


class CaughtSignals:
    """SIGINT and SIGTERM recorded instead of acted on, for the block (in the main thread; elsewhere
    nothing is caught), so that dbt can be stopped in order and waited for."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, object] = {}

    def __enter__(self) -> CaughtSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._catch)
        return self

    def _catch(self, signum: int, frame: object) -> None:
        self.received.append(signum)

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    @property
    def exit_code(self) -> int | None:
        """128 + the first signal (130 for SIGINT, 143 for SIGTERM); None when none came."""
        return 128 + self.received[0] if self.received else None


@dataclass(frozen=True)
class ChildOutcome:
    exit_code: int  # the child's, or 130/143 when a signal stopped it
    output: list[str]  # its last output lines when captured
    interrupted: bool


def run_child(
    command: list[str],
    env: dict[str, str],
    cwd: Path,
    signals: CaughtSignals,
    on_signal: Callable[[int], None] | None = None,
    capture: bool = False,
) -> ChildOutcome:
    """Run `command` in a process group of its own and wait for it. A signal caught meanwhile calls
    `on_signal` once (before dbt hears of it), then goes on to the child (ESCALATION). `capture`: the
    output still reaches stdout line by line, and its last lines are returned."""
    if signals.received:  # stopped before the child was started
        if on_signal is not None:
            on_signal(signals.received[0])
        return ChildOutcome(signals.exit_code or 130, [], True)
    pipe = subprocess.PIPE if capture else None
    child = subprocess.Popen(
        # dies with this process (warehouse/child_guard.py); its own process group: a terminal's Ctrl-C
        # reaches only this process, which stops dbt in order
        [sys.executable, "-m", "warehouse.child_guard", str(os.getpid()), *command],
        env={**env, "PYTHONUNBUFFERED": "1"} if capture else env,
        cwd=cwd,
        process_group=0,
        stdout=pipe,
        stderr=subprocess.STDOUT if capture else None,
        text=capture,
        errors="replace" if capture else None,
    )
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    muted = threading.Event()  # once dbt is told to stop: its tracebacks of the interruption are noise
    reader = None
    if capture:
        reader = threading.Thread(target=_tee, args=(child.stdout, tail, muted), daemon=True)
        reader.start()
    passed_on = 0
    while True:
        try:
            code = child.wait(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            pass
        while passed_on < len(signals.received):
            if passed_on == 0:
                name = signal.Signals(signals.received[0]).name
                muted.set()
                print(f"sherliic-dbt: {name}: stopping dbt", file=sys.stderr, flush=True)
                if on_signal is not None:
                    on_signal(signals.received[0])
            child.send_signal(ESCALATION[min(passed_on, len(ESCALATION) - 1)])
            passed_on += 1
    if reader is not None:
        reader.join()
    interrupted = bool(signals.received)
    return ChildOutcome(signals.exit_code if interrupted else code, list(tail), interrupted)


def _tee(stream, tail: deque[str], muted: threading.Event) -> None:
    for line in stream:
        if not muted.is_set():
            sys.stdout.write(line)
            sys.stdout.flush()
        tail.append(line)


# -- a recorded build ------------------------------------------------------------------------------------


def _recorded_build(
    target: Target,
    args: list[str],
    resolved: dict,
    command: list[str],
    env: dict[str, str],
    project_dir: Path,
    signals: CaughtSignals,
) -> int:
    schema = target.marts_schema

    def waiting(what: str) -> None:
        print(f"sherliic-dbt: waiting: {what}; this build starts when it ends", file=sys.stderr, flush=True)

    with builds.build_lock(target, waiting=waiting, stop=lambda: bool(signals.received)) as conn:
        if conn is None:
            print("sherliic-dbt: stopped while waiting; nothing was built", file=sys.stderr, flush=True)
            return signals.exit_code or 130
        builds.mark_stale(conn, schema)
        build_id = builds.start_record(conn, target, " ".join(args), resolved, os.getpid())
        label = f"build {target.build_name} #{build_id}"

        def cancel(signum: int) -> None:
            builds.mark_cancelled(conn, build_id)  # False: the publish came first (then it stands)

        outcome = run_child(
            command, {**env, "SHERLIIC_BUILD_ID": str(build_id)}, project_dir, signals, cancel, capture=True
        )
        record = builds.read_record(conn, build_id)
        if record.status == "cancelled":
            status = "cancelled"
        elif record.published_at is not None or (outcome.exit_code == 0 and not outcome.interrupted):
            status = "succeeded"
        else:
            status = "failed"
        counts = (
            builds.mart_row_counts(conn, schema, project_dir, known=record.row_counts)
            if status == "succeeded"
            else {}
        )
        error = error_line(outcome.output) if status == "failed" else None
        builds.finish_record(
            conn, build_id, status=status, exit_code=outcome.exit_code, error=error, row_counts=counts
        )
        if status == "succeeded":
            candidates = counts.get("inference_candidates")
            shown = "" if candidates is None else f": {candidates:,} inference candidates"
            print(f"sherliic-dbt: {label} ({schema}) succeeded{shown}", flush=True)
            if candidates == 0:
                rerun = "sherliic-dbt run" + (f" --build {target.build}" if target.build else "")
                hint = builds.zero_candidates_hint(conn, schema, rerun)
                if hint:
                    print(f"hint: {hint}", flush=True)
        else:
            kept = f"the marts of build {target.build_name} stay as they were"
            why = f": {error}" if error else ""
            message = f"sherliic-dbt: {label} {status}{why}; nothing published, {kept}"
            print(message, file=sys.stderr, flush=True)
    return outcome.exit_code


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
TIMESTAMP = re.compile(r"^\d\d:\d\d:\d\d(\.\d+)?\s+")
ERROR_TITLE = re.compile(r"\b(Error|Failure|Exception)\b")


def error_line(output: list[str]) -> str | None:
    """The line that says why dbt failed, from its output: the first ``... Error in ...`` /
    ``Failure in ...`` with the line under it, else what follows ``Encountered an error:``, else the
    last line."""
    lines = [TIMESTAMP.sub("", ANSI.sub("", line)).strip() for line in output]
    lines = [line for line in lines if line]
    for i, line in enumerate(lines):
        if line.startswith("Encountered an error:"):
            return " ".join(lines[i + 1 : i + 3])[:500] or None
        if ERROR_TITLE.search(line) and " in " in line and i + 1 < len(lines):
            return f"{line}: {lines[i + 1]}"[:500]
    return lines[-1][:500] if lines else None


# -- the command line ------------------------------------------------------------------------------------

VERSION_MESSAGE = (
    f"%(prog)s %(version)s (dbt-core {_installed('dbt-core')}, dbt-postgres {_installed('dbt-postgres')})"
)


def _split_build_option(dbt_args: tuple[str, ...]) -> tuple[str | None, list[str]]:
    """`--build NAME` / `--build=NAME` among the dbt arguments (dbt has no such option): (NAME, the rest)."""
    name, rest, args = None, [], list(dbt_args)
    i = 0
    while i < len(args):
        if args[i] == "--build":
            if i + 1 >= len(args):
                raise click.UsageError("--build needs a build name")
            name, i = args[i + 1], i + 2
            continue
        if args[i].startswith("--build="):
            name = args[i].split("=", 1)[1]
        else:
            rest.append(args[i])
        i += 1
    return name, rest


@click.command(
    context_settings={
        **CONTEXT,
        # everything from the first argument that is not ours goes to dbt unchanged, options included
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "allow_interspersed_args": False,
    },
)
@click.version_option(package_version(), "--version", message=VERSION_MESSAGE)
@target_options(engines=ENGINES, build=True)
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED, metavar="DBT_COMMAND [DBT_ARGS]...")
def cli(target: Target, dbt_args: tuple[str, ...]) -> int:
    """Run dbt on the project's warehouse: `sherliic-dbt ARGS` is `dbt ARGS` in dbt_project/, with the
    project's profile and the connection filled in; `sherliic-dbt builds` lists the recorded builds.

    \b
    Engine (--engine, or SHERLIIC_ENGINE):
      postgres  the embedded server (started if needed; .pgdata/) or --database-url / DATABASE_URL;
                the raw schema is created first, so dbt's sources exist before the first extraction
      spark     the local Spark catalog in .spark/ (dbt target `spark`; `make spark-deps`)

    \b
    Builds (Postgres): every run/build is recorded (builds.builds: inputs, vars, code, versions,
    row counts, outcome). --build NAME (or SHERLIIC_BUILD) builds into schema build_<NAME> beside the
    default build (schema warehouse); `--build default` is the default build. One build of a schema at a
    time: a second one waits for the first. Ctrl-C / SIGTERM stop dbt, publish nothing, exit 130 / 143.

    Our options (--database-url, --engine, --build, --version, --help) come before the dbt command
    (--build may also follow it); every other argument, from the dbt command on, goes to dbt unchanged,
    so `sherliic-dbt run --help` is dbt's help. dbt's exit code is this command's.

    \b
    Examples:
      sherliic-dbt build                                 models, data tests and unit tests
      sherliic-dbt run --select marts                    only the marts
      sherliic-dbt run --vars '{r_min: 3}'               the paper's thresholds are dbt vars
      sherliic-dbt run --build trial --vars '{corpora: [mine]}'   a named build beside the default one
      sherliic-dbt builds                                the recorded builds, with their provenance
      sherliic-dbt builds --diff default trial           what differs between two builds
      sherliic-dbt builds --drop trial                   drop a named build (schema and records)
      sherliic-dbt --engine spark build                  the same project on Spark
      sherliic-dbt --database-url postgresql://u@h/db test
      sherliic-dbt run --help                            dbt's own help for `run`
    """
    ours = [arg for arg in dbt_args if arg.split("=")[0] in ("--database-url", "--engine")]
    if ours:  # after the dbt command they would reach dbt, which knows neither
        raise click.UsageError(f"{ours[0].split('=')[0]} goes before the dbt command (see --help)")
    if not dbt_args:
        raise click.UsageError("missing the dbt command (e.g. `sherliic-dbt build`); see --help")
    build, args = _split_build_option(dbt_args)
    if build is not None:
        target = target.with_build(build)
    if args[:1] == ["builds"]:
        prog = "sherliic-dbt builds"
        return builds_command.main(args[1:], prog_name=prog, standalone_mode=False, obj=target)
    return run_dbt(target, args, check=False)


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="sherliic-dbt")


if __name__ == "__main__":
    sys.exit(main())
