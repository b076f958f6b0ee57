"""Run dbt against the project's database (embedded by default, DATABASE_URL otherwise)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from warehouse.errors import DatabaseUnavailable, print_error
from warehouse.server import database_url, dbt_env, ensure_schema
from warehouse.settings import DBT_PROJECT_DIR


def dbt_executable() -> str:
    candidate = Path(sys.executable).parent / "dbt"
    return str(candidate) if candidate.exists() else "dbt"


def run_dbt(args: list[str], url: str | None = None, dbt_vars: dict | None = None, check: bool = True) -> int:
    """Run `dbt <args>` in dbt_project/ on the database at `url`; dbt vars are passed as JSON."""
    url = url or database_url()
    ensure_schema(url)  # dbt's sources must exist even before the first extraction
    project = str(DBT_PROJECT_DIR)
    command = [dbt_executable(), *args, "--project-dir", project, "--profiles-dir", project]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars)]
    completed = subprocess.run(command, env=dbt_env(url), cwd=DBT_PROJECT_DIR)
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
