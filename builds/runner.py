"""`sherliic-dbt`: dbt on a Target's warehouse, Postgres (embedded by default, DATABASE_URL otherwise) or
the Spark catalog (dbt target `spark`), with what plain dbt cannot do.

The dbt project records and publishes every build itself (dbt_project/macros/build_records.sql), so a
plain `dbt run` is a build like this command's. This wrapper adds: the build's name as the dbt var
`build` (--build NAME, SHERLIIC_BUILD), the git commit and versions in the record (dbt cannot run git),
waiting for another build of the same schema instead of being refused (the schema's advisory lock, held
while its dbt runs), and a process group: dbt dies with this process, and SIGINT or SIGTERM here marks
the record cancelled (so that the publish refuses to run), passes SIGINT on to dbt (its graceful stop),
waits for it, and exits 130 / 143. It ends with one line saying how the build ended (and the hint of a
build without candidates).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click
import yaml

from builds import records as build_records
from builds.cli import builds_command
from builds.dbt_vars import dbt_command, given_vars, resolve_vars, without_vars
from warehouse.command_line import CONTEXT, package_version, run, target_options
from warehouse.errors import ConfigurationError
from warehouse.settings import DBT_PROJECT_DIR
from warehouse.target import DEFAULT_BUILD, ENGINES, Target

PUBLISHING = frozenset({"run", "build", "seed", "retry"})  # commands that publish marts: locked, recorded
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
    target = with_build_of(target, args, dbt_vars)
    resolve_vars(project_dir, args, dbt_vars)
    dbt_env = {**target.dbt_env(), **(env or {})}  # a named build on Spark is refused here, in one line
    # Postgres: dbt's sources must exist even before the first extraction. Spark: the loaders
    # create the raw tables; a second JVM here would also hold the one-process Derby metastore
    target.ensure_schema()
    command = _command(target, args, dbt_vars, project_dir)
    with CaughtSignals() as signals:
        if dbt_command(args) in PUBLISHING and target.engine == "postgres":
            code = _recorded_build(target, args, command, dbt_env, project_dir, signals)
        else:
            code = run_child(command, dbt_env, project_dir, signals).exit_code
    if check and code != 0:
        raise RuntimeError(f"dbt {' '.join(args)} failed with exit code {code}")
    return code


def with_build_of(target: Target, args: list[str], dbt_vars: dict | None) -> Target:
    """The Target of the build the invocation names: --build (the Target's) or the dbt var `build`
    (``--vars '{build: NAME}'``); naming two different builds is refused in one line."""
    given = {**given_vars(args), **(dbt_vars or {})}
    if "build" not in given:
        return target
    named = target.with_build(given["build"] if given["build"] is not None else DEFAULT_BUILD)
    if target.build is not None and named.build != target.build:
        raise ConfigurationError(
            f"two builds named: --build {target.build} (or SHERLIIC_BUILD) and the dbt var build: "
            f"{named.build_name}; name one"
        )
    return named


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
    """dbt's command line: `args` with every var given (theirs, `dbt_vars`, the Target's build) in one
    --vars (dbt keeps only the last one)."""
    project = str(project_dir)
    merged = {**given_vars(args), **(dbt_vars or {})}
    # `dbt retry` takes the vars of the run it resumes; vars given to it would replace them all
    if target.build is not None and dbt_command(args) != "retry":
        merged["build"] = target.build
    command = [dbt_executable(), *without_vars(args), "--project-dir", project, "--profiles-dir", project]
    if "--target" not in args and "-t" not in args:
        command += ["--target", target.dbt_target]
    if merged:  # YAML, as dbt reads it (JSON has no NaN, which validate_vars must see to refuse it)
        command += ["--vars", yaml.safe_dump(merged, default_flow_style=True, width=2**31).strip()]
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
        # dies with this process (builds/child_guard.py); its own process group: a terminal's Ctrl-C
        # reaches only this process, which stops dbt in order
        [sys.executable, "-m", "builds.child_guard", str(os.getpid()), *command],
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
    command: list[str],
    env: dict[str, str],
    project_dir: Path,
    signals: CaughtSignals,
) -> int:
    schema = target.marts_schema

    def waiting(what: str) -> None:
        print(f"sherliic-dbt: waiting: {what}; this build starts when it ends", file=sys.stderr, flush=True)

    with build_records.build_lock(target, waiting=waiting, stop=lambda: bool(signals.received)) as conn:
        if conn is None:
            print("sherliic-dbt: stopped while waiting; nothing was built", file=sys.stderr, flush=True)
            return signals.exit_code or 130
        token = uuid.uuid4().hex
        commit, dirty = build_records.code_version()
        context = {
            "runner": "sherliic-dbt",
            "token": token,
            "lock_pid": conn.info.backend_pid,  # alive while this process holds the schema's lock
            "git_commit": commit,
            "git_dirty": dirty,
            "versions": build_records.tool_versions(target.engine),
            "command": " ".join(args),
        }

        def cancel(signum: int) -> None:
            build_records.mark_cancelled(conn, token)  # nothing when the publish came first (then it stands)

        outcome = run_child(
            command,
            {**env, "SHERLIIC_BUILD_CONTEXT": json.dumps(context)},
            project_dir,
            signals,
            cancel,
            capture=True,
        )
        record = build_records.record_of_runner(conn, token)
        if record is not None and record.status != "succeeded":
            if record.status == "running":  # dbt ended before it finished the record
                status = "cancelled" if outcome.interrupted else "failed"
                build_records.finish_unrecorded(conn, record.build_id, status, error_line(outcome.output))
            build_records.note_exit_code(conn, record.build_id, outcome.exit_code)
            record = build_records.read_record(conn, record.build_id)
        return _report(target, schema, record, outcome)


def _report(
    target: Target, schema: str, record: build_records.BuildRecord | None, outcome: ChildOutcome
) -> int:
    """One line on how the build ended (and the hint of a build without candidates); the exit code."""
    if record is None:  # dbt stopped before the build began (a var refused, another build running, ...)
        why = error_line(outcome.output) or "dbt stopped before the build began"
        print(f"sherliic-dbt: build {target.build_name} did not start: {why}", file=sys.stderr, flush=True)
        return outcome.exit_code or 1
    label = f"build {record.build_name} #{record.build_id}"
    if record.status == "succeeded":
        candidates = record.row_counts.get("inference_candidates")
        shown = "" if candidates is None else f": {candidates:,} inference candidates"
        late = " (the stop came after it was published)" if outcome.interrupted else ""
        print(f"sherliic-dbt: {label} ({schema}) succeeded{shown}{late}", flush=True)
        if record.hint:
            print(f"hint: {record.hint}", flush=True)
        return 0
    kept = f"the marts of build {record.build_name} stay as they were"
    why = f": {record.error}" if record.error else ""
    retry = " (dbt retry resumes it)" if record.staged_models and not outcome.interrupted else ""
    print(
        f"sherliic-dbt: {label} {record.status}{why}; nothing published, {kept}{retry}",
        file=sys.stderr,
        flush=True,
    )
    return outcome.exit_code or 1


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
TIMESTAMP = re.compile(r"^\d\d:\d\d:\d\d(\.\d+)?\s+")
ERROR_TITLE = re.compile(r"\b(Error|Failure|Exception)\b")
HOOK_FAILED = re.compile(r"\bfailed, error:$")  # dbt's line between a failed hook's title and its cause


def error_line(output: list[str]) -> str | None:
    """The line that says why dbt failed, from its output: the first ``... Error in ...`` /
    ``Failure in ...`` with the cause under it (for a failed hook, the cause alone: its title names
    only the hook), else what follows ``Encountered an error:``, else the last line."""
    lines = [TIMESTAMP.sub("", ANSI.sub("", line)).strip() for line in output]
    lines = [line for line in lines if line]
    for i, line in enumerate(lines):
        if line.startswith("Encountered an error:"):
            return " ".join(lines[i + 1 : i + 3])[:500] or None
        if ERROR_TITLE.search(line) and " in " in line and i + 1 < len(lines):
            cause = [text for text in lines[i + 1 : i + 4] if not HOOK_FAILED.search(text)]
            if not cause:
                continue
            if line.startswith("Failure in operation"):
                return cause[0][:500]
            return f"{line}: {cause[0]}"[:500]
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
