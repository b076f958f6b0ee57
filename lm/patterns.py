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
# Several patterns in one run (Schmitt & Schütze 2021's multi-pattern training): one model is trained on
# every item rendered with each pattern, and a pair's score is the mean probability over the patterns.
# Such a run's pattern is the names joined with JOINT, e.g. "y because x | x, which means that y".
JOINT = " | "


def joint(names: tuple[str, ...] | list[str]) -> str:
    """The pattern of a run trained on several patterns at once (one name: that pattern)."""
    return JOINT.join(names)


def pattern_names(pattern: str) -> tuple[str, ...]:
    """The patterns a run's pattern stands for: one, or several joined with JOINT."""
    return tuple(pattern.split(JOINT))


def _clause(sentence: str) -> str:
    return " ".join(str(sentence).split()).rstrip(" .!?;")


def render(pattern: str, premise: str, hypothesis: str) -> str:
    """The pattern's sentence for one pair; `hypothesis only` gives the bare hypothesis."""
    if pattern == HYPOTHESIS_ONLY:
        return _clause(hypothesis) + "."
    if pattern not in PATTERNS:
        raise KeyError(f"unknown pattern {pattern!r}; known: {', '.join(PATTERNS)}")
    return PATTERNS[pattern].format(x=_clause(premise), y=_clause(hypothesis))
