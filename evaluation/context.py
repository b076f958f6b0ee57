"""The Context a baselines command evaluates in, made once at its edge from its Target and environment."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from builds.records import build_ref
from evaluation.registry import Context
from warehouse.target import Target

# Environment variables naming a rule file (instead of the shared data folder's copy).
RESOURCE_VARIABLES = (
    "SHERLIIC_BERANT_I",
    "SHERLIIC_BERANT_II",
    "SHERLIIC_PPDB",
    "SHERLIIC_PATTY_PATTERNS",
    "SHERLIIC_PATTY_SUBSUMPTIONS",
    "SHERLIIC_SCHOENMACKERS",
    "SHERLIIC_CHIRPS",
)


def resource_files(environ: Mapping[str, str] | None = None) -> dict[str, Path]:
    """The rule files named by RESOURCE_VARIABLES in `environ` (default this process's environment): read
    once, at a command's edge, into Context.resource_files."""
    environ = os.environ if environ is None else environ
    return {name: Path(environ[name]) for name in RESOURCE_VARIABLES if environ.get(name)}


@contextmanager
def command_context(
    target: Target,
    *,
    shared_data: Path | None,
    lm: Any,
    environ: Mapping[str, str] | None = None,
) -> Iterator[Context]:
    """The baselines' Context for the block: the command's Target (on Spark its marts open for the whole
    block: one session for every read) and the build it reads (its name and record), the shared data
    folder, the rule files the environment names (read here, once) and the `lm:` settings the caller
    read at its edge (lm.plan.LmSettings, usually LmSettings.as_recorded(): what `make lm` recorded)."""
    environ = os.environ if environ is None else environ
    context = Context(
        target=target,
        shared_data=None if shared_data is None else str(shared_data),
        resource_files=resource_files(environ),
        lm=lm,
        build=build_ref(target),
    )
    if target.engine != "spark":
        yield context  # Postgres: each read opens a cheap connection of its own
        return
    with target.marts() as marts:
        context.marts = marts
        yield context
