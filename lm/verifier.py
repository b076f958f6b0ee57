"""A verifier: a named, cached fine-tuned cross-encoder that judges whether a premise entails a
hypothesis, for callers outside the benchmarks (ranking the warehouse's inference candidates).

A verifier is
  - a model (lm.models: minilm, mpnet),
  - a pattern set (each a pattern of lm.patterns, or several trained jointly, "a | b"),
  - its training data: the labelled pool of one benchmark (SherLIiC dev; Levy/Holt train+dev), plus the
    pools of `extra` benchmarks, identified by the hash of the training pairs and labels,
  - seeds, and the recipe knobs of the plan (epochs, directional loss weight),
  - optionally a share of the same model's zero-shot cosine (the "mix" of `make lm`, LM_COSINE_SHARE).
Its score for a (premise, hypothesis) pair is the mean probability over its runs (one per pattern and
seed); with a cosine share c, (1 - c) x that mean + c x the cosine of the two sentences' embeddings.
Each run is the "whole pool" model of the harness's cross-fit of that benchmark (lm.crossfit),
under the same recipe, so a verifier shares its trained weights with `make lm`, and the honest-fold
figures (split `tm_cv`, `sherliic-lm select`, docs/lm.md) describe it.

    spec = DEFAULT_VERIFIER                      # or VerifierSpec(model="minilm", patterns=(...), ...)
    verifier = build_verifier(spec, load_items(target))
    probabilities = score_pairs(verifier, premises, hypotheses, allow_compute=True)
    verifier.name, verifier.key                  # how results are keyed

Stable API (used by the ranking of candidates, lm/rank/): VerifierSpec, Verifier (.name, .key,
.runs(), .describe(), .trained() -> TrainedVerifier: each run's weights as a ScoringRun, for the faster
scoring path of lm.inference), DEFAULT_VERIFIER, plan_trains, build_verifier, score_pairs, mix.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from lm.crossfit import CrossFit
from lm.models import get_model
from lm.patterns import HYPOTHESIS_ONLY, PATTERNS, pattern_names
from lm.plan import DEFAULT_PLAN, Plan
from lm.runs import (
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
    cosine_share: float = 0.0  # share of the model's zero-shot cosine in the score (0: fine-tuned only)
    # a student: trained on `teacher`'s scores of the same training pairs, in both orders (distillation);
    # the teacher trains on the same pools
    teacher: VerifierSpec | None = None

    def __post_init__(self) -> None:
        try:
            get_model(self.model)
        except KeyError as error:
            raise ConfigurationError(str(error.args[0])) from None
        if not 0.0 <= self.cosine_share < 1.0:
            raise ConfigurationError(f"cosine share {self.cosine_share}: expected 0 <= share < 1")
        for pattern in self.patterns:
            for name in pattern_names(pattern):
                if name not in PATTERNS and pattern != HYPOTHESIS_ONLY:  # the probe: judged like a pattern
                    raise ConfigurationError(f"unknown pattern {name!r}; known: {'; '.join(PATTERNS)}")
        if not self.patterns or not self.seeds:
            raise ConfigurationError("a verifier needs at least one pattern and one seed")
        if self.teacher is not None and (self.teacher.dataset, self.teacher.extra) != (
            self.dataset,
            self.extra,
        ):
            raise ConfigurationError("a student and its teacher train on the same pools")

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
            "cosine_share": self.cosine_share,
            **({"teacher": self.teacher.to_dict()} if self.teacher else {}),
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
            cosine_share=float(data.get("cosine_share", 0.0)),
            teacher=cls.from_dict(data["teacher"]) if data.get("teacher") else None,
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


def plan_trains(plan: Plan, spec: VerifierSpec) -> bool:
    """Whether `make lm` under `plan` trains every run of the verifier `spec` (its models of the whole pool
    of spec.dataset) and mixes in the zero-shot cosine with the verifier's share."""
    planned = plan.patterns_for(spec.model, spec.dataset)
    return (
        plan.source(spec.dataset) == spec.dataset
        and set(spec.patterns) <= set(planned)
        and set(spec.seeds) <= set(plan.seeds)
        and plan.extra_training(spec.dataset) == spec.extra
        and (plan.direction, plan.epochs, plan.folds) == (spec.direction, spec.epochs, spec.folds)
        and spec.cosine_share in (0.0, plan.cosine_share)
    )


# The verifier the honest selection picked (docs/lm.md, "Honest selection"): on the predicate-disjoint
# folds of SherLIiC dev, MiniLM fine-tuned on "x, which means that y" mixed with its zero-shot cosine
# (share 0.75, the default plan's LM_COSINE_SHARE) beat both parts alone, on Levy/Holt too. Its run is the
# default plan's seed-0 model of the whole SherLIiC pool on that pattern, so `make lm` trains it (tested:
# plan_trains(DEFAULT_PLAN, DEFAULT_VERIFIER)); seeds 1 and 2 were not judged on the folds.
DEFAULT_VERIFIER = VerifierSpec(
    model="minilm", patterns=(PATTERN_B,), seeds=(0,), cosine_share=DEFAULT_PLAN.cosine_share
)


def mix(tuned: np.ndarray, cosine: np.ndarray, share: float) -> np.ndarray:
    """(1 - share) x fine-tuned probability + share x zero-shot cosine: the one place of the formula (the
    `fine-tuned + zero-shot` methods of `make lm`, score_pairs, the ranking's scorers)."""
    return (1.0 - share) * np.asarray(tuned, dtype=float) + share * np.asarray(cosine, dtype=float)


@dataclass(frozen=True)
class ScoringRun:
    """One trained run as a scorer needs it: which encoder, which weights, which patterns."""

    key: str  # the run's cache key (lm.runs.run_key): names its ONNX exports too
    model: str  # a lm.models name
    patterns: tuple[str, ...]  # one pattern, or several for a run trained on them jointly
    weights: Path  # the run's weights.safetensors
    max_length: int


def scoring_run(
    recipe: Recipe,
    training: TrainingSet,
    *,
    settings: RunSettings,
    allow_compute: bool,
    show_progress: bool = True,
) -> ScoringRun:
    """The run of (recipe, training) with its weights, trained first when missing and `allow_compute`
    (else ResourceMissing)."""
    label = f"verifier {recipe.model} '{recipe.pattern}' seed {recipe.seed}"
    weights = trained_weights(
        recipe,
        training,
        allow_compute=allow_compute,
        settings=settings,
        show_progress=show_progress,
        label=label,
    )
    return ScoringRun(
        key=run_key(recipe, training.hash),
        model=recipe.model,
        patterns=recipe.patterns,
        weights=weights,
        max_length=recipe.max_length,
    )


@dataclass(frozen=True)
class TrainedVerifier:
    """A verifier whose runs are trained and located: what a scorer loads (lm.inference), e.g.
    in the ranking's Spark workers. Made by Verifier.trained."""

    name: str
    key: str
    runs: tuple[ScoringRun, ...]
    cosine_share: float = 0.0
    description: dict = field(default_factory=dict, compare=False, hash=False)  # stored with its scores

    @property
    def model(self) -> str:
        return self.runs[0].model


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
        """20 hex digits naming the runs (model, recipes, training items, seeds) and the cosine share:
        equal keys, equal scores."""
        keys: list = sorted(run_key(r, self.training_hash) for r in self.recipes)
        if self.spec.cosine_share:  # a verifier without the cosine keeps the key it always had
            keys.append({"zero-shot cosine": self.spec.model, "share": self.spec.cosine_share})
        return hashlib.sha256(json.dumps(keys, sort_keys=True).encode()).hexdigest()[:20]

    @property
    def name(self) -> str:
        """Human-readable and unique, e.g. `mpnet [x, which means that y] sherliic #1a2b3c4d seeds 0,1,2`."""
        data = "+".join((self.spec.dataset, *self.spec.extra))
        seeds = ",".join(str(s) for s in self.spec.seeds)
        direction = f" direction {self.spec.direction:g}" if self.spec.direction else ""
        cosine = f" + zero-shot cosine {self.spec.cosine_share:g}" if self.spec.cosine_share else ""
        teacher = f" distilled from {self.spec.teacher.model}" if self.spec.teacher else ""
        return (
            f"{self.spec.model} [{'; '.join(self.spec.patterns)}] {data}{direction} "
            f"#{self.training_hash[:8]} seeds {seeds}{cosine}{teacher}"
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
            "cosine_share": self.spec.cosine_share,
        }

    def trained(
        self, *, settings: RunSettings | None = None, allow_compute: bool = True, show_progress: bool = True
    ) -> TrainedVerifier:
        """This verifier with the weights of its runs, each trained first when missing and `allow_compute`
        (else ResourceMissing naming `make lm`)."""
        settings = settings or RunSettings()  # out/lm/runs: a command passes its own (lm.plan)
        runs = tuple(
            scoring_run(
                recipe, training, settings=settings, allow_compute=allow_compute, show_progress=show_progress
            )
            for recipe, training in self.runs()
        )
        return TrainedVerifier(self.name, self.key, runs, self.spec.cosine_share, self.describe())


def fold_verifier(
    spec: VerifierSpec,
    training: TrainingSet,
    n_nominal: int,
    *,
    settings: RunSettings | None = None,
    allow_compute: bool = True,
) -> Verifier:
    """The verifier of `spec` trained on these items (the whole pool's, or a cross-fit fold model's); a
    student's items are first labelled by its teacher trained on the same items (distilled_training)."""
    if spec.teacher is not None:
        teacher = fold_verifier(
            spec.teacher, training, n_nominal, settings=settings, allow_compute=allow_compute
        )
        training = distilled_training(teacher, training, settings=settings, allow_compute=allow_compute)
    plan = spec.plan()
    recipes = tuple(
        plan.recipe(spec.model, pattern, seed, n_nominal) for pattern in spec.patterns for seed in spec.seeds
    )
    return Verifier(spec, training, n_nominal, recipes)


def build_verifier(
    spec: VerifierSpec,
    items: pd.DataFrame,
    *,
    settings: RunSettings | None = None,
    allow_compute: bool = True,
) -> Verifier:
    """The verifier of `spec` trained on the loaded benchmark `items` (evaluation.datasets.load_items):
    the pool of spec.dataset plus those of spec.extra. ConfigurationError when that pool is not loaded.
    A student's training items are labelled by its teacher here (trained first when missing and
    `allow_compute`, else ResourceMissing); any other verifier is built without computing anything."""
    source = items[items["dataset"] == spec.dataset]
    extra = items[items["dataset"].isin([d for d in spec.extra if d != spec.dataset])]
    fit = CrossFit.of(spec.dataset, source, extra if len(extra) else None, spec.folds)
    if fit.pool.empty:
        raise ConfigurationError(f"verifier {spec.model}: no labelled {spec.dataset} items are loaded")
    return fold_verifier(
        spec, fit.full_training(), fit.n_nominal, settings=settings, allow_compute=allow_compute
    )


def distilled_training(
    teacher: Verifier, training: TrainingSet, *, settings: RunSettings | None, allow_compute: bool
) -> TrainingSet:
    """A student's training items: the teacher's training pairs, each also the other way round (what the
    teacher knows about direction), labelled with the teacher's score (its probability mixed with its
    cosine share), rounded to 4 decimals so that the set's hash does not depend on float noise."""
    premises = training.premises + training.hypotheses
    hypotheses = training.hypotheses + training.premises
    soft = score_pairs(
        teacher, premises, hypotheses, settings=settings, allow_compute=allow_compute, store=True
    )
    return TrainingSet(
        premises,
        hypotheses,
        [round(float(p), 4) for p in soft],
        f"{training.description}, both orders, labelled by {teacher.name}",
    )


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
    """The verifier's scores of the pairs (aligned with `premises`): the mean probability over its runs,
    mixed with the zero-shot cosine by its share. Runs that are not trained yet are trained first when
    `allow_compute` (else ResourceMissing; pairs are scored with the cached weights either way). `store`:
    add the scored pairs to each run's scores.json (the benchmarks do; a caller with many pairs keeps its
    own)."""
    if len(premises) != len(hypotheses):
        raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
    settings = settings or RunSettings()  # out/lm/runs: a command passes its own (lm.plan)
    if len(premises) == 0:
        return np.zeros(0, dtype=float)
    if not allow_compute:  # never train; scoring new pairs with cached weights is fine
        for recipe, training in verifier.runs():
            trained_weights(recipe, training, allow_compute=False, settings=settings)
    premises, hypotheses = [str(p) for p in premises], [str(h) for h in hypotheses]
    common = {"settings": settings, "show_progress": show_progress, "stats": stats, "store": store}
    runs = [
        run_scores(
            recipe,
            training,
            premises,
            hypotheses,
            allow_compute=True,
            label=f"verifier {verifier.spec.model} '{recipe.pattern}' seed {recipe.seed}",
            **common,
        )
        for recipe, training in verifier.runs()
    ]
    tuned = np.mean(runs, axis=0)
    if not verifier.spec.cosine_share:
        return tuned
    cosine = run_scores(
        Recipe.zero_shot(verifier.spec.model), None, premises, hypotheses, allow_compute=True, **common
    )
    return mix(tuned, cosine, verifier.spec.cosine_share)
