"""Imports every baseline module so that each registers itself in evaluation.registry.REGISTRY.

Each baseline module adds one import line here.
"""

from __future__ import annotations

import importlib

from evaluation.registry import REGISTRY

# Core baselines (Lemma, Always yes, rule collections, word vectors).
CORE_MODULES = ("baselines.lemma", "baselines.rules", "baselines.word_vectors")
# Graph baselines (distributional, relation embeddings, probe, learned combination).
GRAPH_MODULES = (
    "baselines.distributional",
    "baselines.rel_embeddings",
    "baselines.probe",
    "baselines.combination",
)
# Language-model methods (`lm:`; torch is imported only when they score, see lm/).
LM_MODULES = ("lm.methods",)
# The order of the registered methods: by module in this order, each module's in its own registration
# order, whatever order a process imported them in (the `lm:` methods right after the rules: the order
# `make baselines` has always written). It orders the reports and the learned combination's features.
MODULE_ORDER = (
    "baselines.lemma",
    "baselines.rules",
    *LM_MODULES,
    "baselines.word_vectors",
    *GRAPH_MODULES,
)

# The learned combination (baselines/combination.py), named here for the commands that evaluate it
# beside other methods (`sherliic-lm run`) without importing the baselines.
COMBINATION = "learned combination"

# The order of the paper's Table 3 (methods not listed there follow in registration order).
TABLE3_ORDER = (
    "Lemma",
    "Always yes",
    "Berant I",
    "Berant II",
    "PPDB",
    "Patty",
    "Schoenmackers",
    "Chirps",
    "All Rules",
    "word2vec (GloVe 6B 50d substitute)",
    "typed_rel_emb",
    "untyped_rel_emb",
    "w2v+typed_rel",
    "w2v+untyped_rel",
    "w2v+tsg_rel_emb",
    "WeedsPrec (typed)",
    "WeedsPrec (untyped)",
    "invCL (typed)",
    "invCL (untyped)",
    "Sherlock+ESR",
)


# The families of the report's PR plots (evaluation.report.plot_curves), by the module that registers a
# method: one figure per family keeps each legend short and the curves comparable.
FAMILIES = {
    "baselines.lemma": "rules",
    "baselines.rules": "rules",
    "baselines.word_vectors": "vectors",
    "baselines.rel_embeddings": "vectors",
    "baselines.distributional": "graph",
    "lm.methods": "lm",
    "baselines.combination": "combination",
    "baselines.probe": "combination",  # also a learned model (over hypothesis features)
}


def _module(name: str) -> str:
    baseline = REGISTRY.get(name)
    return getattr(baseline.score, "__module__", "") if baseline else ""


def family(name: str) -> str:
    """The plot family of a method: rules, vectors, graph, lm, combination; "other" if unregistered."""
    load_all()
    return FAMILIES.get(_module(name), "lm" if name.startswith("lm:") else "other")


def load_all() -> dict:
    """Import all baseline modules and return the registry."""
    for module in (*CORE_MODULES, *GRAPH_MODULES, *LM_MODULES):
        importlib.import_module(module)
    return REGISTRY


def registered_names() -> list[str]:
    """Every registered baseline name, in MODULE_ORDER (others last, in registration order)."""
    load_all()
    rank = {module: i for i, module in enumerate(MODULE_ORDER)}
    return sorted(REGISTRY, key=lambda name: rank.get(_module(name), len(rank)))  # stable: keeps ties


def ordered_names() -> list[str]:
    """Registered baseline names, Table 3 order first."""
    load_all()
    first = [n for n in TABLE3_ORDER if n in REGISTRY]
    return first + [n for n in registered_names() if n not in first]
