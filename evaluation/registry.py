"""The one place where baselines are registered by name.

A baseline scores benchmark items. `items` is a DataFrame with one row per item and (at least)
these columns, as loaded by evaluation.datasets:

    item_id, dataset, split,
    premise_path, hypothesis_path          SherLIiC path syntax (None when not mappable)
    premise_type_a, premise_type_b,        types of the premise's argument A/B (None if unknown)
    hypothesis_type_a, hypothesis_type_b,
    is_premise_reversed, is_hypothesis_reversed   (bool)
    premise_text, hypothesis_text          the surface form (sentence or triple), for text baselines
    label                                  bool gold (True = premise entails hypothesis)

`score` returns a float Series aligned with items.index: higher = more likely entailment; NaN = the
baseline has no information for that item (counted as not covered, scored as its minimum).
A non-tunable baseline returns 0/1 scores. `run_on_top_of_lemma` in evaluation.evaluate combines
a baseline with Lemma as the paper does.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from builds.records import BuildRef
from warehouse.target import Marts, Target


class ResourceMissing(RuntimeError):
    """A baseline's resource (a file, a package, a built warehouse, a cached LM run) is not available;
    the harness skips the baseline with this message."""


@dataclass
class Context:
    """What baselines may read: the warehouse, the shared data folder and the resource files, the LM
    settings; a cache for models. A command makes it once at its edge (evaluation.context).

    `target` is the command's warehouse (None: baselines that read no database); benchmark items and
    results live on its Postgres side. `marts`, when set, are open marts the baselines read instead of
    opening the Target's for each query (on Spark: one session for the whole run). `resource_files`: rule
    files named by environment variables (evaluation.context.RESOURCE_VARIABLES -> path), read at the edge.
    `lm`: the plan and settings of the `lm:` methods (None: the defaults, lm.plan). `build`: the
    build whose marts are read, as results name it (None: the Target's build, without a record)."""

    target: Target | None = None
    shared_data: str | None = None
    cache: dict = field(default_factory=dict)
    marts: Marts | None = None
    resource_files: Mapping[str, Path] = field(default_factory=dict)
    lm: Any = None  # lm.plan.LmSettings, opaque here: the registry sits below the LM room
    build: BuildRef | None = None

    @property
    def build_ref(self) -> BuildRef:
        """The build the results of this Context name."""
        if self.build is not None:
            return self.build
        return BuildRef() if self.target is None else BuildRef(self.target.build_name)

    @property
    def warehouse(self) -> Target | Marts:
        """Where the marts are read: what warehouse.target.marts_of takes."""
        if self.marts is not None:
            return self.marts
        if self.target is None:
            raise ResourceMissing("no warehouse: this baseline reads the marts, and no target was given")
        return self.target


ScoreFunction = Callable[[pd.DataFrame, Context], pd.Series]


@dataclass(frozen=True)
class Baseline:
    name: str
    score: ScoreFunction
    tunable: bool
    description: str
    on_top_of_lemma: bool = True  # the paper's default; Lemma itself and Always yes set False
    # combines other methods' scores (an ensemble, a mix, the learned combination), unlike any paper row
    composite: bool = False


REGISTRY: dict[str, Baseline] = {}


def register(
    name: str, *, tunable: bool, description: str, on_top_of_lemma: bool = True, composite: bool = False
):
    """Decorator: register `score` under `name`; `composite` when it combines other methods' scores (the
    reports mark such rows: they have no published counterpart)."""

    def decorator(score: ScoreFunction) -> ScoreFunction:
        if name in REGISTRY:
            raise ValueError(f"baseline {name!r} registered twice")
        REGISTRY[name] = Baseline(name, score, tunable, description, on_top_of_lemma, composite)
        return score

    return decorator


def get(name: str) -> Baseline:
    if name not in REGISTRY:
        known = ", ".join(sorted(REGISTRY))
        raise KeyError(f"unknown baseline {name!r}; known: {known}")
    return REGISTRY[name]


def is_composite(name: str) -> bool:
    """Whether the registered method `name` combines other methods' scores (False when unregistered)."""
    baseline = REGISTRY.get(name)
    return baseline is not None and baseline.composite


def _loose(name: str) -> str:
    """`name` without case, spaces and punctuation: "Always yes" = "always_yes" = "AlwaysYes", "WeedsPrec
    (typed)" = "weedsprec typed"."""
    return re.sub(r"[\W_]+", "", name).casefold()


def resolve(name: str) -> str:
    """The registered name `name` means: itself when registered, else the one name equal to it up to
    case, spaces and punctuation ("lemma" -> "Lemma", "always_yes" -> "Always yes").

    KeyError (one line) for an unknown or ambiguous name, naming the closest registered names."""
    if name in REGISTRY:
        return name
    loose = _loose(name)
    matches = sorted(registered for registered in REGISTRY if _loose(registered) == loose)
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise KeyError(f"baseline {name!r} is ambiguous: {', '.join(map(repr, matches))}")
    by_loose = {_loose(registered): registered for registered in REGISTRY}
    closest = [by_loose[c] for c in difflib.get_close_matches(loose, list(by_loose), n=3, cutoff=0.5)]
    hint = f"closest: {', '.join(map(repr, closest))}" if closest else "none is close"
    raise KeyError(f"unknown baseline {name!r}; {hint} (`sherliic-baselines list` lists them all)")
