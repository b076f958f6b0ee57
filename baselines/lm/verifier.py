"""A verifier: a named, cached fine-tuned cross-encoder that judges whether a premise entails a
hypothesis, for callers outside the benchmarks (ranking the warehouse's inference candidates).

A verifier is
  - a model (baselines.lm.models: minilm, mpnet),
  - a pattern set (each a pattern of baselines.lm.patterns, or several trained jointly, "a | b"),
  - its training data: the labelled pool of one benchmark (SherLIiC dev; Levy/Holt train+dev), plus the
    pools of `extra` benchmarks, identified by the hash of the training pairs and labels,
  - seeds, and the recipe knobs of the plan (epochs, directional loss weight).
Its score for a (premise, hypothesis) pair is the mean probability over its runs (one per pattern and
seed). Each run is the "whole pool" model of the harness's cross-fit of that benchmark (baselines.lm.
crossfit), under the same recipe, so a verifier shares its trained weights with `make lm`, and the
honest-fold figures of `make lm` (split `pd_cv`, docs/lm.md) describe it.

    spec = DEFAULT_VERIFIER                      # or VerifierSpec(model="minilm", patterns=(...), ...)
    verifier = build_verifier(spec, load_items(target))
    probabilities = score_pairs(verifier, premises, hypotheses, allow_compute=True)
    verifier.name, verifier.key                  # how results are keyed

Stable API (used by the ranking of candidates): VerifierSpec, Verifier (.name, .key, .runs(),
.describe()), DEFAULT_VERIFIER, build_verifier, score_pairs, verifier_weights.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from baselines.lm.crossfit import CrossFit
from baselines.lm.models import get_model
from baselines.lm.patterns import HYPOTHESIS_ONLY, PATTERNS, pattern_names
from baselines.lm.plan import DEFAULT_PLAN, Plan
from baselines.lm.runs import (
    Recipe,
    RunSettings,
    RunStats,
    TrainingSet,
    run_key,
    run_scores,
    trained_weights,
)
from warehouse.errors import ConfigurationError


@dataclass(frozen=True)
class VerifierSpec:
    """What a verifier is made of, before its training items are known."""

    model: str
    patterns: tuple[str, ...]
    dataset: str = "sherliic"  # the benchmark whose labelled pool trains it
    extra: tuple[str, ...] = ()  # benchmarks whose pools are added (as in LM_TRAIN_WITH)
    seeds: tuple[int, ...] = (0, 1, 2)
    direction: float = 0.0  # weight of the directional loss (LM_DIRECTION)
    epochs: int | None = None  # None: the plan's rule (about EXAMPLES_PER_RUN examples per run)
    folds: int = 5  # the cross-fit it belongs to: fixes the epochs rule's training size

    def __post_init__(self) -> None:
        get_model(self.model)
        for pattern in self.patterns:
            for name in pattern_names(pattern):
                if name not in PATTERNS:
                    raise ConfigurationError(f"unknown pattern {name!r}; known: {'; '.join(PATTERNS)}")
        if not self.patterns or not self.seeds:
            raise ConfigurationError("a verifier needs at least one pattern and one seed")

    def plan(self) -> Plan:
        """The `make lm` plan whose runs on `dataset` are this verifier's."""
        return Plan(
            seeds=self.seeds,
            patterns=self.patterns,
            finetune={self.model: (self.dataset,)},
            all_patterns=(self.dataset,),
            hypothesis_only=(),
            epochs=self.epochs,
            folds=self.folds,
            score_with=(),
            train_with=((self.dataset, self.extra),) if self.extra else (),
            direction=self.direction,
        )

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "patterns": list(self.patterns),
            "dataset": self.dataset,
            "extra": list(self.extra),
            "seeds": list(self.seeds),
            "direction": self.direction,
            "epochs": self.epochs,
            "folds": self.folds,
        }

    @classmethod
    def from_dict(cls, data: dict) -> VerifierSpec:
        return cls(
            model=data["model"],
            patterns=tuple(data["patterns"]),
            dataset=data.get("dataset", "sherliic"),
            extra=tuple(data.get("extra", ())),
            seeds=tuple(int(s) for s in data.get("seeds", (0, 1, 2))),
            direction=float(data.get("direction", 0.0)),
            epochs=data.get("epochs"),
            folds=int(data.get("folds", 5)),
        )


PATTERN_B = "x, which means that y"


def verifier_of_plan(plan: Plan, dataset: str = "sherliic") -> VerifierSpec | None:
    """The verifier whose runs are the plan's models of the whole `dataset` pool (the ones that score its
    test file): the biggest model the plan fine-tunes there, with all its patterns (not the
    hypothesis-only probe); None if the plan fine-tunes no model on it."""
    models = [m for m in sorted(plan.finetune, key=lambda m: -get_model(m).parameters_millions)]
    for model in models:
        patterns = tuple(p for p in plan.patterns_for(model, dataset) if p != HYPOTHESIS_ONLY)
        if patterns and plan.source(dataset) == dataset:
            return VerifierSpec(
                model=model,
                patterns=patterns,
                dataset=dataset,
                extra=plan.extra_training(dataset),
                seeds=plan.seeds,
                direction=plan.direction,
                epochs=plan.epochs,
                folds=plan.folds,
            )
    return None


# The verifier of the default `make lm` plan on SherLIiC (the pattern sentences of typed rules are
# SherLIiC-like), chosen on the predicate-disjoint folds (docs/lm.md, "Honest selection"): `make lm`
# trains its runs, so they are cached once `make lm` ran.
DEFAULT_VERIFIER = verifier_of_plan(DEFAULT_PLAN) or VerifierSpec(model="minilm", patterns=(PATTERN_B,))


@dataclass(frozen=True)
class Verifier:
    """A verifier with its training items: everything that fixes its scores."""

    spec: VerifierSpec
    training: TrainingSet
    n_nominal: int  # the training size its epochs follow (a fold's share of the pool)
    recipes: tuple[Recipe, ...] = field(default=())

    @property
    def training_hash(self) -> str:
        return self.training.hash

    @property
    def key(self) -> str:
        """20 hex digits naming the runs (model, recipes, training items, seeds): equal keys, equal scores."""
        keys = sorted(run_key(r, self.training_hash) for r in self.recipes)
        return hashlib.sha256(json.dumps(keys).encode()).hexdigest()[:20]

    @property
    def name(self) -> str:
        """Human-readable and unique, e.g. `mpnet [x, which means that y] sherliic #1a2b3c4d seeds 0,1,2`."""
        data = "+".join((self.spec.dataset, *self.spec.extra))
        seeds = ",".join(str(s) for s in self.spec.seeds)
        direction = f" direction {self.spec.direction:g}" if self.spec.direction else ""
        return (
            f"{self.spec.model} [{'; '.join(self.spec.patterns)}] {data}{direction} "
            f"#{self.training_hash[:8]} seeds {seeds}"
        )

    def runs(self) -> list[tuple[Recipe, TrainingSet]]:
        """Its runs (one per pattern and seed) with their training items: what scores, what to export."""
        return [(recipe, self.training) for recipe in self.recipes]

    def describe(self) -> dict:
        """JSON-ready description (stored beside the scores it gave)."""
        return {
            "name": self.name,
            "key": self.key,
            "spec": self.spec.to_dict(),
            "training": self.training.description,
            "training_hash": self.training_hash,
            "runs": [run_key(r, self.training_hash) for r in self.recipes],
        }


def build_verifier(spec: VerifierSpec, items: pd.DataFrame) -> Verifier:
    """The verifier of `spec` trained on the loaded benchmark `items` (baselines.datasets.load_items):
    the pool of spec.dataset plus those of spec.extra. ConfigurationError when that pool is not loaded."""
    source = items[items["dataset"] == spec.dataset]
    extra = items[items["dataset"].isin([d for d in spec.extra if d != spec.dataset])]
    fit = CrossFit.of(spec.dataset, source, extra if len(extra) else None, spec.folds)
    if fit.pool.empty:
        raise ConfigurationError(f"verifier {spec.model}: no labelled {spec.dataset} items are loaded")
    plan = spec.plan()
    recipes = tuple(
        plan.recipe(spec.model, pattern, seed, fit.n_nominal)
        for pattern in spec.patterns
        for seed in spec.seeds
    )
    return Verifier(spec, fit.full_training(), fit.n_nominal, recipes)


def score_pairs(
    verifier: Verifier,
    premises: Sequence[str],
    hypotheses: Sequence[str],
    *,
    settings: RunSettings | None = None,
    allow_compute: bool = True,
    show_progress: bool = False,
    store: bool = False,
    stats: RunStats | None = None,
) -> np.ndarray:
    """Entailment probabilities of the pairs (aligned with `premises`): the mean over the verifier's runs.
    Runs that are not trained yet are trained first when `allow_compute` (else ResourceMissing; pairs are
    scored with the cached weights either way). `store`:
    add the scored pairs to each run's scores.json (the benchmarks do; a caller with many pairs keeps its
    own)."""
    if len(premises) != len(hypotheses):
        raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
    settings = settings or RunSettings()  # out/lm/runs: a command passes its own (baselines.lm.plan)
    if len(premises) == 0:
        return np.zeros(0, dtype=float)
    if not allow_compute:  # never train; scoring new pairs with cached weights is fine
        for recipe, training in verifier.runs():
            trained_weights(recipe, training, allow_compute=False, settings=settings)
    runs = [
        run_scores(
            recipe,
            training,
            [str(p) for p in premises],
            [str(h) for h in hypotheses],
            allow_compute=True,
            settings=settings,
            show_progress=show_progress,
            stats=stats,
            label=f"verifier {verifier.spec.model} '{recipe.pattern}' seed {recipe.seed}",
            store=store,
        )
        for recipe, training in verifier.runs()
    ]
    return np.mean(runs, axis=0)


def verifier_weights(
    verifier: Verifier, *, settings: RunSettings | None = None, allow_compute: bool = True
) -> list[tuple[Recipe, Path]]:
    """The weights file of each run (trained first if missing and allowed): what a faster scoring path
    (e.g. an exported ONNX model) loads; average the runs' probabilities like score_pairs."""
    settings = settings or RunSettings()
    return [
        (recipe, trained_weights(recipe, training, allow_compute=allow_compute, settings=settings))
        for recipe, training in verifier.runs()
    ]
