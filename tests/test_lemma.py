"""Lemma and Always yes (docs/design.md §7): stopword list, passive detection and criteria (1)-(3)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from baselines.lemma import always_yes_score, is_passive, lemma_rule, lemma_score, predicate_lemma, stopwords
from evaluation.registry import Context


def test_stopword_list_is_nltks_179_words():
    words = stopwords()
    assert len(words) == 179
    assert {"the", "being", "into", "wouldn't", "should've", "ma", "y"} <= words
    assert not {"lead", "go", "cannot", "would"} & words  # not in NLTK's (pre-3.9) English list


@pytest.mark.parametrize(
    ("path", "passive"),
    [
        ("nsubjpass^-___invade___prep___by___pobj", True),
        ("pobj^-___by___prep^-___invade___nsubjpass", True),
        ("dobj___invade___nsubjpass^-", True),
        ("nsubj^-___invade___dobj", False),
        ("dobj^-___decide___nsubjpass___x___dobj", False),  # nsubjpass only inside: active
    ],
)
def test_passive_detection(path, passive):
    assert is_passive(path) is passive


@pytest.mark.parametrize(
    ("premise", "hypothesis", "expected"),
    [
        # identical
        ("nsubj^-___lead___dobj", "nsubj^-___lead___dobj", True),
        # (1) a content lemma of the hypothesis is missing from the premise
        ("nsubj^-___lead___dobj", "nsubj^-___lead___prep___to___pobj___victory", False),
        # (1) only a stopword differs ("into" vs "to")
        ("nsubj^-___go___prep___to___pobj", "nsubj^-___go___prep___into___pobj", True),
        # (2) content words present but the predicates differ (decide vs attack)
        ("nsubj^-___decide___xcomp___attack___dobj", "nsubj^-___attack___dobj", False),
        # (3) voice and inversion both differ: "A invades B" => "B is invaded by A"
        ("nsubj^-___invade___dobj", "pobj^-___by___prep^-___invade___nsubjpass", True),
        # (3) same voice, different inversion: "A invades B" vs "B invades A"
        ("nsubj^-___invade___dobj", "dobj^-___invade___nsubj", False),
    ],
)
def test_lemma_rule(premise, hypothesis, expected):
    from deppath.paths import is_reversed

    assert lemma_rule(premise, hypothesis, is_reversed(premise), is_reversed(hypothesis)) is expected


def test_predicate_lemma_first_or_last():
    assert predicate_lemma("pobj^-___by___prep^-___invade___nsubjpass", True) == "invade"
    assert predicate_lemma("nsubj^-___trade___prep___with___pobj", False) == "trade"
    assert predicate_lemma("poss", False) == ""


def test_scores_nan_without_paths_and_always_yes():
    items = pd.DataFrame(
        {
            "premise_path": ["nsubj^-___lead___dobj", None],
            "hypothesis_path": ["nsubj^-___lead___dobj", "nsubj^-___lead___dobj"],
            "is_premise_reversed": [False, False],
            "is_hypothesis_reversed": [False, False],
        }
    )
    ctx = Context()
    s = lemma_score(items, ctx)
    assert s.iloc[0] == 1.0 and math.isnan(s.iloc[1])
    assert always_yes_score(items, ctx).tolist() == [1.0, 1.0]
