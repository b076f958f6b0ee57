"""Run dbt on a Target's warehouse: Postgres (embedded by default, DATABASE_URL otherwise) or the Spark
catalog (dbt target `spark`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click

from warehouse.command_line import CONTEXT, package_version, run, target_options
from warehouse.settings import DBT_PROJECT_DIR
from warehouse.target import ENGINES, Target


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
    """Run `dbt <args>` in dbt_project/ (or another `project_dir`) on the Target's warehouse; dbt vars are
    passed as JSON and checked by the project before any model runs (macros/validate_vars.sql). `env`:
    extra variables for dbt's process."""
    if "--help" in args or "-h" in args:  # dbt's own help needs no warehouse: start no server for it
        dbt_env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "False"}
    else:
        # Postgres: dbt's sources must exist even before the first extraction. Spark: the loaders
        # create the raw tables; a second JVM here would also hold the one-process Derby metastore
        target.ensure_schema()
        dbt_env = target.dbt_env()
    project = str(project_dir)
    command = [dbt_executable(), *args, "--project-dir", project, "--profiles-dir", project]
    if "--target" not in args and "-t" not in args:
        command += ["--target", target.dbt_target]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars)]
    completed = subprocess.run(command, env={**dbt_env, **(env or {})}, cwd=project_dir)
    if check and completed.returncode != 0:
        raise RuntimeError(f"dbt {' '.join(args)} failed with exit code {completed.returncode}")
    return completed.returncode


VERSION_MESSAGE = (
    f"%(prog)s %(version)s (dbt-core {_installed('dbt-core')}, dbt-postgres {_installed('dbt-postgres')})"
)


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
@target_options(engines=ENGINES)
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED, metavar="DBT_COMMAND [DBT_ARGS]...")
def cli(target: Target, dbt_args: tuple[str, ...]) -> int:
    """Run dbt on the project's warehouse: `sherliic-dbt ARGS` is `dbt ARGS` in dbt_project/, with the
    project's profile and the connection filled in.

    \b
    Engine (--engine, or SHERLIIC_ENGINE):
      postgres  the embedded server (started if needed; .pgdata/) or --database-url / DATABASE_URL;
                the raw schema is created first, so dbt's sources exist before the first extraction
      spark     the local Spark catalog in .spark/ (dbt target `spark`; `make spark-deps`)

    Our options (--database-url, --engine, --version, --help) come before the dbt command; every other
    argument, from the dbt command on, goes to dbt unchanged, so `sherliic-dbt run --help` is dbt's help.
    dbt's exit code is this command's.

    \b
    Examples:
      sherliic-dbt build                                 models, data tests and unit tests
      sherliic-dbt run --select marts                    only the marts
      sherliic-dbt run --vars '{r_min: 3}'               the paper's thresholds are dbt vars
      sherliic-dbt --engine spark build                  the same project on Spark
      sherliic-dbt --database-url postgresql://u@h/db test
      sherliic-dbt run --help                            dbt's own help for `run`
    """
    ours = [arg for arg in dbt_args if arg.split("=")[0] in ("--database-url", "--engine")]
    if ours:  # after the dbt command they would reach dbt, which knows neither
        raise click.UsageError(f"{ours[0].split('=')[0]} goes before the dbt command (see --help)")
    if not dbt_args:
        raise click.UsageError("missing the dbt command (e.g. `sherliic-dbt build`); see --help")
    return run_dbt(target, list(dbt_args), check=False)


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="sherliic-dbt")


if __name__ == "__main__":
    sys.exit(main())
