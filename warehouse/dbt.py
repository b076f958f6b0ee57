"""Run dbt against the project's database: Postgres (embedded by default, DATABASE_URL otherwise) or,
with SHERLIIC_ENGINE=spark, the local Spark catalog (warehouse.engine; dbt target `spark`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from warehouse.engine import current_engine, dbt_target, spark_dbt_env
from warehouse.errors import DatabaseUnavailable, print_error
from warehouse.server import database_url, dbt_env, ensure_schema
from warehouse.settings import DBT_PROJECT_DIR


def dbt_executable() -> str:
    candidate = Path(sys.executable).parent / "dbt"
    return str(candidate) if candidate.exists() else "dbt"


def run_dbt(
    args: list[str],
    url: str | None = None,
    dbt_vars: dict | None = None,
    check: bool = True,
    engine: str | None = None,
    project_dir: Path = DBT_PROJECT_DIR,
) -> int:
    """Run `dbt <args>` in dbt_project/ (or another `project_dir`) on an engine's warehouse; dbt vars are
    passed as JSON and checked by the project before any model runs (macros/validate_vars.sql).
    Engine: as given, else Postgres when a database `url` is given, else SHERLIIC_ENGINE."""
    engine = engine or ("postgres" if url else current_engine())
    if engine == "spark":
        # the raw tables are created by the Spark loaders (warehouse.spark_raw); starting a second
        # JVM here would also hold the one-process Derby metastore
        env = {**os.environ, **spark_dbt_env(), "DBT_SEND_ANONYMOUS_USAGE_STATS": "False"}
    else:
        url = url or database_url()
        ensure_schema(url)  # dbt's sources must exist even before the first extraction
        env = dbt_env(url)
    project = str(project_dir)
    command = [dbt_executable(), *args, "--project-dir", project, "--profiles-dir", project]
    if "--target" not in args and "-t" not in args:
        command += ["--target", dbt_target(engine)]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars)]
    completed = subprocess.run(command, env=env, cwd=project_dir)
    if check and completed.returncode != 0:
        raise RuntimeError(f"dbt {' '.join(args)} failed with exit code {completed.returncode}")
    return completed.returncode


def main(argv: list[str] | None = None) -> int:
    """`sherliic-dbt run --select marts` = `dbt run ...` on the project's database."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return run_dbt(args, check=False)
    except DatabaseUnavailable as exc:
        print_error(exc)
        return 2


if __name__ == "__main__":
    sys.exit(main())
