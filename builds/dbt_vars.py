"""The dbt vars of an invocation: the project's declared vars (dbt_project.yml, with their defaults)
merged with those given (``--vars`` in the dbt arguments, and a caller's ``dbt_vars``), checked by name
before dbt starts. The values themselves are checked by the project (macros/validate_vars.sql)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import yaml

from warehouse.errors import ConfigurationError

# dbt's commands (the first argument that names one is the command; global flags may come before it)
DBT_COMMANDS = frozenset(
    "build clean clone compile debug deps docs init list ls parse retry run run-operation seed show "
    "snapshot source test".split()
)


def dbt_command(args: list[str]) -> str | None:
    """The dbt command of `args` (``run``, ``build``, ...), None when there is none."""
    return next((arg for arg in args if arg in DBT_COMMANDS), None)


def declared_vars(project_dir: Path) -> dict[str, Any]:
    """Every var of the project's dbt_project.yml with its default."""
    project = yaml.safe_load((project_dir / "dbt_project.yml").read_text(encoding="utf-8")) or {}
    return dict(project.get("vars") or {})


def given_vars(args: list[str]) -> dict[str, Any]:
    """The vars of ``--vars VALUE`` / ``--vars=VALUE`` in dbt arguments (YAML, as dbt reads it; the last
    one wins, as in dbt)."""
    found: dict[str, Any] = {}
    for i, arg in enumerate(args):
        if arg == "--vars" and i + 1 < len(args):
            text = args[i + 1]
        elif arg.startswith("--vars="):
            text = arg.split("=", 1)[1]
        else:
            continue
        try:
            parsed = yaml.safe_load(text) if text.strip() else {}
        except yaml.YAMLError as error:
            problem = " ".join(str(error).split())
            raise ConfigurationError(f"--vars {text!r} is not YAML: {problem}") from None
        if not isinstance(parsed, dict):
            raise ConfigurationError(f"--vars {text!r}: expected a mapping such as '{{r_min: 3}}'")
        found = parsed
    return found


def without_vars(args: list[str]) -> list[str]:
    """`args` without their ``--vars VALUE`` / ``--vars=VALUE`` options."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--vars":
            skip = True
        elif not arg.startswith("--vars="):
            kept.append(arg)
    return kept


def resolve_vars(project_dir: Path, args: list[str], dbt_vars: dict | None = None) -> dict[str, Any]:
    """Every declared var with the value this invocation gives it (`dbt_vars` over ``--vars``); an unknown
    var name is refused in one line naming the closest known one."""
    declared = declared_vars(project_dir)
    given = {**given_vars(args), **(dbt_vars or {})}
    for name in given:
        if name not in declared:
            raise ConfigurationError(unknown_var_message(str(name), sorted(declared)))
    return {**declared, **given}


def unknown_var_message(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else f"the vars: {', '.join(known)}"
    return f"unknown dbt var {name!r}: {hint} (dbt_project/dbt_project.yml declares every var)"
