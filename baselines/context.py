"""The Context a baselines command evaluates in, made once at its edge from its Target and environment."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from baselines.lm.plan import LmSettings
from baselines.registry import Context
from baselines.rules import resource_files
from warehouse.builds import build_ref
from warehouse.target import Target


@contextmanager
def command_context(
    target: Target,
    *,
    shared_data: Path | None,
    lm: LmSettings | None = None,
    environ: Mapping[str, str] | None = None,
) -> Iterator[Context]:
    """The baselines' Context for the block: the command's Target (on Spark its marts open for the whole
    block: one session for every read) and the build it reads (its name and record), the shared data
    folder, the rule files the environment names (read here, once) and the `lm:` settings (default: what
    `make lm` recorded, LmSettings.as_recorded)."""
    environ = os.environ if environ is None else environ
    lm = lm if lm is not None else LmSettings.as_recorded(environ)
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
