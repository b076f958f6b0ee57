"""Schmitt & Schütze (2021) hand-written patterns: one sentence out of premise x and hypothesis y.

"Language Models for Lexical Inference in Context" (EACL 2021) feed a cross-encoder the pair inside a
pattern that states the entailment (x = premise, y = hypothesis), e.g. "y because x". A trailing period
is added once; the sentences' own final punctuation is stripped so it does not double.
"""

from __future__ import annotations

# name -> template; {x} = premise sentence, {y} = hypothesis sentence
PATTERNS: dict[str, str] = {
    "y because x": "{y} because {x}.",
    "x, which means that y": "{x}, which means that {y}.",
    "it is not the case that y, let alone that x": "It is not the case that {y}, let alone that {x}.",
    "y due to the fact that x": "{y} due to the fact that {x}.",
    "y, because x": "{y}, because {x}.",
}
# The hypothesis-only probe (Li et al. 2022): the same recipe with the premise left out.
HYPOTHESIS_ONLY = "hypothesis only"


def _clause(sentence: str) -> str:
    return " ".join(str(sentence).split()).rstrip(" .!?;")


def render(pattern: str, premise: str, hypothesis: str) -> str:
    """The pattern's sentence for one pair; `hypothesis only` gives the bare hypothesis."""
    if pattern == HYPOTHESIS_ONLY:
        return _clause(hypothesis) + "."
    if pattern not in PATTERNS:
        raise KeyError(f"unknown pattern {pattern!r}; known: {', '.join(PATTERNS)}")
    return PATTERNS[pattern].format(x=_clause(premise), y=_clause(hypothesis))
