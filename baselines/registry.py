"""The one place where baselines are registered by name.

A baseline scores benchmark items. `items` is a DataFrame with one row per item and (at least)
these columns, as loaded by baselines.datasets:

    item_id, dataset, split,
    premise_path, hypothesis_path          SherLIiC path syntax (None when not mappable)
    premise_type_a, premise_type_b,        types of the premise's argument A/B (None if unknown)
    hypothesis_type_a, hypothesis_type_b,
    is_premise_reversed, is_hypothesis_reversed   (bool)
    premise_text, hypothesis_text          the surface form (sentence or triple), for text baselines
    label                                  bool gold (True = premise entails hypothesis)

`score` returns a float Series aligned with items.index: higher = more likely entailment; NaN = the
baseline has no information for that item (counted as not covered, scored as its minimum).
A non-tunable baseline returns 0/1 scores. `run_on_top_of_lemma` in baselines.evaluate combines
a baseline with Lemma as the paper does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from warehouse.marts import Marts


@dataclass
class Context:
    """What baselines may read: the warehouse and the shared data folder; a cache for models.

    `database_url` is the Postgres database (benchmark items, results, and the marts on Postgres);
    `marts`, when set, are the open marts of another engine (SHERLIIC_ENGINE=spark) that the baselines
    read instead (one Spark session for the whole run)."""

    database_url: str
    shared_data: str | None = None
    cache: dict = field(default_factory=dict)
    marts: Marts | None = None

    @property
    def warehouse(self) -> str | Marts:
        """Where the marts are read: what warehouse.marts.marts_of takes."""
        return self.marts if self.marts is not None else self.database_url


ScoreFunction = Callable[[pd.DataFrame, Context], pd.Series]


@dataclass(frozen=True)
class Baseline:
    name: str
    score: ScoreFunction
    tunable: bool
    description: str
    on_top_of_lemma: bool = True  # the paper's default; Lemma itself and Always yes set False


REGISTRY: dict[str, Baseline] = {}


def register(name: str, *, tunable: bool, description: str, on_top_of_lemma: bool = True):
    """Decorator: register `score` under `name`."""

    def decorator(score: ScoreFunction) -> ScoreFunction:
        if name in REGISTRY:
            raise ValueError(f"baseline {name!r} registered twice")
        REGISTRY[name] = Baseline(name, score, tunable, description, on_top_of_lemma)
        return score

    return decorator


def get(name: str) -> Baseline:
    if name not in REGISTRY:
        known = ", ".join(sorted(REGISTRY))
        raise KeyError(f"unknown baseline {name!r}; known: {known}")
    return REGISTRY[name]
