"""The verifier that ranks the candidates: a named set of fine-tuned cross-encoder runs.

A verifier is a model, a pattern set, its training items (named by their hash) and seeds; its score for a
pair is the mean probability over its runs (one per pattern and seed). :func:`ranking_verifier` resolves
a :class:`VerifierChoice` (what the command line names) into a :class:`RankingVerifier`: its name, its
key (equal keys, equal scores) and the weights of each run, trained first when missing and allowed.

The runs are those `make lm` trains and caches (baselines.lm.runs): a model fine-tuned on SherLIiC dev's
items with lm_split=train, one run per pattern and seed, under the recipe of the default plan. Ranking
needs only each run's weights, so a faster scoring path (baselines.lm.inference) can load them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from baselines.lm.methods import training_jobs
from baselines.lm.models import get_model
from baselines.lm.patterns import PATTERNS
from baselines.lm.plan import DEFAULT_PLAN
from baselines.lm.runs import RunSettings, TrainingSet, run_key, run_scores
from baselines.registry import ResourceMissing
from warehouse.errors import ConfigurationError

JOINT = " | "  # a run trained on several patterns at once names them joined (baselines.lm.patterns)


@dataclass(frozen=True)
class ScoringRun:
    """One fine-tuned run as a scorer needs it: which encoder, which weights, which patterns."""

    key: str  # the run's cache key (baselines.lm.runs.run_key): names its ONNX exports too
    model: str  # a baselines.lm.models name
    patterns: tuple[str, ...]  # one pattern, or several for a run trained on them jointly
    weights: Path  # the run's weights.safetensors
    max_length: int


@dataclass(frozen=True)
class VerifierChoice:
    """A verifier as the command line names it (default: the models of the default `make lm` plan)."""

    model: str = "minilm"
    patterns: tuple[str, ...] = DEFAULT_PLAN.patterns
    seeds: tuple[int, ...] = DEFAULT_PLAN.seeds
    dataset: str = "sherliic"  # the loaded benchmark whose training items train it (baselines.lm.methods)

    @classmethod
    def of(
        cls, model: str, patterns: tuple[str, ...] | None = None, seeds: tuple[int, ...] | None = None
    ) -> VerifierChoice:
        """The choice with the defaults where `patterns` or `seeds` is None (not given)."""
        defaults = cls()
        return cls(model=model, patterns=patterns or defaults.patterns, seeds=seeds or defaults.seeds)

    def __post_init__(self) -> None:
        try:
            get_model(self.model)
        except KeyError as error:
            raise ConfigurationError(str(error.args[0])) from None
        for pattern in self.patterns:
            for name in pattern.split(JOINT):
                if name not in PATTERNS:
                    raise ConfigurationError(f"unknown pattern {name!r}; known: {'; '.join(PATTERNS)}")
        if not self.patterns or not self.seeds:
            raise ConfigurationError("a verifier needs at least one pattern and one seed")


@dataclass(frozen=True)
class RankingVerifier:
    """A verifier with its trained runs: everything that fixes its scores."""

    name: str  # e.g. `minilm [x, which means that y] sherliic #1a2b3c4d seeds 0`
    key: str  # 20 hex digits over its run keys: equal keys, equal scores
    runs: tuple[ScoringRun, ...]
    description: dict = field(default_factory=dict, compare=False, hash=False)  # stored in results.verifiers

    @property
    def model(self) -> str:
        return self.runs[0].model


def verifier_key(run_keys: list[str]) -> str:
    return hashlib.sha256(json.dumps(sorted(run_keys)).encode()).hexdigest()[:20]


def _training(items: pd.DataFrame, dataset: str) -> TrainingSet:
    group = items[items["dataset"] == dataset]
    jobs = training_jobs(group) if len(group) else []
    if not jobs:
        raise ConfigurationError(
            f"no labelled {dataset} items are loaded to train the verifier: run `make baselines` "
            "(or `sherliic-baselines load`) first"
        )
    return jobs[0][0]  # SherLIiC: dev items with lm_split=train; Levy/Holt: train, as `make lm` trains them


def ranking_verifier(
    choice: VerifierChoice,
    items: pd.DataFrame,
    *,
    settings: RunSettings | None = None,
    allow_train: bool = True,
    show_progress: bool = True,
) -> RankingVerifier:
    """The verifier of `choice` trained on the loaded benchmark `items` (baselines.datasets.load_items).
    A run whose weights are not cached is trained (and its training items scored, as `make lm` does)
    when `allow_train`; otherwise ResourceMissing names the command that trains it."""
    settings = settings or RunSettings()
    training = _training(items, choice.dataset)
    runs = []
    for pattern in choice.patterns:
        for seed in choice.seeds:
            recipe = DEFAULT_PLAN.recipe(choice.model, pattern, seed, len(training.labels))
            key = run_key(recipe, training.hash)
            weights = settings.runs_dir / key / "weights.safetensors"
            if not weights.is_file():
                label = f"verifier {choice.model} '{pattern}' seed {seed}"
                if not allow_train:
                    raise ResourceMissing(f"{label}: not trained yet; run `make lm` or `make rank`")
                if not settings.keep_weights:
                    raise ConfigurationError(
                        f"{label}: ranking needs the weights, and LM_KEEP_WEIGHTS=0 keeps none"
                    )
                # trains the run and scores its training items: the cache `make lm` leaves behind
                run_scores(
                    recipe,
                    training,
                    training.premises,
                    training.hypotheses,
                    allow_compute=True,
                    settings=settings,
                    show_progress=show_progress,
                    label=label,
                )
            runs.append(
                ScoringRun(
                    key=key,
                    model=choice.model,
                    patterns=tuple(pattern.split(JOINT)),
                    weights=weights,
                    max_length=recipe.max_length,
                )
            )
    seeds = ",".join(str(s) for s in choice.seeds)
    name = (
        f"{choice.model} [{'; '.join(choice.patterns)}] {choice.dataset} #{training.hash[:8]} seeds {seeds}"
    )
    key = verifier_key([run.key for run in runs])
    description = {
        "name": name,
        "key": key,
        "model": choice.model,
        "patterns": list(choice.patterns),
        "seeds": list(choice.seeds),
        "training": training.description,
        "training_hash": training.hash,
        "runs": [run.key for run in runs],
    }
    return RankingVerifier(name=name, key=key, runs=tuple(runs), description=description)
