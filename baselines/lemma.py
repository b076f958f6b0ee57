"""Lemma and Always yes (paper §4, Table 3), with the path helpers the rule baselines share.

Semantics of the original SherLIiC code (docs/design.md §7): Lemma says yes iff
  (1) every non-stopword lemma of the hypothesis path occurs in the premise path,
  (2) premise and hypothesis have the same predicate lemma (first lemma, or last if reversed),
  (3) (voice_p == voice_h) == (rev_p == rev_h); a path is passive iff it starts with nsubjpass or
      ends with nsubjpass / nsubjpass^-.
Stopwords: NLTK's 179-word English list, kept in baselines/data/stopwords_en.txt because NLTK's data
download is unreachable.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from deppath.paths import is_reversed as path_is_reversed  # the paper's flag, one definition
from evaluation.registry import Context, register

__all__ = [
    "always_yes_score",
    "is_passive",
    "lemma_rule",
    "lemma_score",
    "path_is_reversed",
    "path_lemmas",
    "predicate_lemma",
    "stopwords",
]

STOPWORDS_FILE = Path(__file__).resolve().parent / "data" / "stopwords_en.txt"


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """NLTK's English stopword list (179 words, NLTK < 3.9)."""
    words = [w.strip() for w in STOPWORDS_FILE.read_text(encoding="utf-8").splitlines() if w.strip()]
    return frozenset(words)


def path_lemmas(path: str) -> list[str]:
    """Lemmas of a SherLIiC path: the odd positions after splitting on `___`."""
    return path.split("___")[1::2]


def is_passive(path: str) -> bool:
    """Passive voice as in the original code: starts with nsubjpass, or ends with nsubjpass(^-)."""
    return path.startswith("nsubjpass") or path.endswith("nsubjpass") or path.endswith("nsubjpass^-")


def predicate_lemma(path: str, reversed_: bool) -> str:
    """The predicate: first lemma, or the last one when the relation is read from the end."""
    lemmas = path_lemmas(path)
    if not lemmas:  # a direct edge between the arguments (text items only)
        return ""
    return lemmas[-1] if reversed_ else lemmas[0]


def lemma_rule(premise: str, hypothesis: str, prem_reversed: bool, hypo_reversed: bool) -> bool:
    """The Lemma baseline on one pair of SherLIiC paths."""
    stop = stopwords()
    prem_lemmas = path_lemmas(premise)
    content_there = all(w in prem_lemmas for w in path_lemmas(hypothesis) if w not in stop)
    same_predicate = predicate_lemma(premise, prem_reversed) == predicate_lemma(hypothesis, hypo_reversed)
    same_voice = is_passive(premise) == is_passive(hypothesis)
    same_inversion = prem_reversed == hypo_reversed
    return content_there and same_predicate and (same_voice == same_inversion)


def _pairs(items: pd.DataFrame):
    return zip(
        items["premise_path"],
        items["hypothesis_path"],
        items["is_premise_reversed"],
        items["is_hypothesis_reversed"],
        strict=True,
    )


@register(
    "Lemma",
    tunable=False,
    on_top_of_lemma=False,
    description="yes iff the hypothesis' content lemmas are in the premise, same predicate, "
    "voice/inversion agree",
)
def lemma_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    values = [
        float(lemma_rule(p, h, bool(rp), bool(rh)))
        if isinstance(p, str) and isinstance(h, str)
        else float("nan")
        for p, h, rp, rh in _pairs(items)
    ]
    return pd.Series(values, index=items.index, dtype=float)


@register(
    "Always yes", tunable=False, on_top_of_lemma=False, description="predicts entailment for every item"
)
def always_yes_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    return pd.Series(1.0, index=items.index, dtype=float)
