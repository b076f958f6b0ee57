"""One command-line style (warehouse/command_line.py) for every entry point: `--help` and `--version` work
and print nothing on stderr, `sherliic-db url` never starts a server, `sherliic-dbt --help` is ours while
`sherliic-dbt run --help` is dbt's. The commands run as subprocesses of the installed scripts, in an
environment without XDG_RUNTIME_DIR (CI, containers, ssh sessions: the case that printed a warning)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from warehouse import server
from warehouse.command_line import package_version
from warehouse.settings import PROJECT_ROOT

BIN = Path(sys.executable).parent
SCRIPTS = sorted(tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["scripts"])
# the project's module CLIs: those behind a make target (not pytest), and the two that are run by hand
MODULES = sorted(
    {
        module
        for module in re.findall(r"\$\(BIN\)/python -m ([\w.]+)", (PROJECT_ROOT / "Makefile").read_text())
        if (PROJECT_ROOT / module.split(".")[0]).is_dir()
    }
    | {"benchmarks.synthetic_teg", "warehouse.spark_raw"}
)


def _env(**extra: str | None) -> dict[str, str]:
    """This environment without XDG_RUNTIME_DIR, with `extra` set (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def _command(name: str) -> list[str]:
    return [str(BIN / name)] if name in SCRIPTS else [sys.executable, "-m", name]


def _run(name: str, *args: str, **env: str | None) -> subprocess.CompletedProcess:
    command = [*_command(name), *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, env=_env(**env), cwd=PROJECT_ROOT
    )


def test_every_script_and_module_is_listed():
    assert {"sherliic-db", "sherliic-dbt", "sherliic-demo"} <= set(SCRIPTS)
    assert {"baselines.probe", "benchmarks.bench_candidates", "warehouse.spark_raw"} <= set(MODULES)


@pytest.mark.parametrize("name", SCRIPTS + MODULES)
def test_help_and_version(name):
    shown = _run(name, "--help")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("Usage: ") and shown.stderr == ""
    assert _run(name, "-h").stdout == shown.stdout
    version = _run(name, "--version")
    assert version.returncode == 0 and version.stderr == ""
    assert version.stdout.split()[-1 if name != "sherliic-dbt" else 1] == package_version()


# the commands that read a build's marts (README, Command line)
BUILD_READERS = [
    ("sherliic-export",),
    ("sherliic-baselines", "all"),
    ("sherliic-baselines", "one"),
    ("sherliic-lm", "run"),
    ("sherliic-lm", "rank"),
    ("sherliic-annotate", "sample"),
]


@pytest.mark.parametrize("command", BUILD_READERS, ids=" ".join)
def test_every_command_that_reads_a_build_takes_build(command):
    shown = _run(*command, "--help")
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"--build NAME\s+The named build whose marts to use", shown.stdout), shown.stdout


def test_a_usage_error_exits_with_2():
    result = _run("sherliic-db", "no-such-command")
    assert result.returncode == 2 and "No such command 'no-such-command'" in result.stderr


def test_db_url_never_starts_the_server(tmp_path):
    pgdata = tmp_path / "pgdata"
    result = _run("sherliic-db", "url", SHERLIIC_PGDATA=str(pgdata), DATABASE_URL=None)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"error: the embedded server ({pgdata}) is not running; start it with `sherliic-db start`"
    ]
    assert not (pgdata / "postmaster.pid").exists()


def test_db_url_prints_the_given_url_or_the_running_servers(db_target):
    given = "postgresql://someone@somewhere:5433/other"
    assert _run("sherliic-db", "url", "--database-url", given).stdout == given + "\n"
    assert _run("sherliic-db", "url", DATABASE_URL=given).stdout == given + "\n"
    if not os.environ.get("DATABASE_URL"):  # the embedded server runs (db_target started it)
        result = _run("sherliic-db", "url")
        assert (result.returncode, result.stderr) == (0, "")
        assert result.stdout == server.running_server_url(db_target.pgdata) + "\n"


def test_dbt_help_is_ours_and_dbts_after_the_dbt_command(tmp_path):
    pgdata = tmp_path / "pgdata"
    ours = _run("sherliic-dbt", "--help", SHERLIIC_PGDATA=str(pgdata), DATABASE_URL=None)
    assert ours.returncode == 0 and ours.stderr == ""
    assert ours.stdout.startswith("Usage: sherliic-dbt [OPTIONS] DBT_COMMAND [DBT_ARGS]...")
    words = " ".join(ours.stdout.split())  # help is wrapped to the terminal
    for text in ("SHERLIIC_ENGINE", "every other argument, from the dbt command on, goes to dbt", "Examples"):
        assert text in words
    dbts = _run("sherliic-dbt", "run", "--help", SHERLIIC_PGDATA=str(pgdata), DATABASE_URL=None)
    assert dbts.returncode == 0 and dbts.stdout.startswith("Usage: dbt run")
    assert not (pgdata / "postmaster.pid").exists()  # neither help started a server
    misplaced = _run("sherliic-dbt", "run", "--database-url", "postgresql://x@y/z")
    assert misplaced.returncode == 2 and "--database-url goes before the dbt command" in misplaced.stderr
    assert _run("sherliic-dbt", "--engine", "oracle", "build").returncode == 2


def test_dbt_passes_its_arguments_through(fresh_target):
    listed = _run("sherliic-dbt", "--database-url", fresh_target.url(), "ls", "--select", "stg_*", "--quiet")
    assert listed.returncode == 0, listed.stdout[-2000:] + listed.stderr[-2000:]
    names = listed.stdout.split()
    assert names and all(".staging." in name for name in names)
