"""The seven path filters of SherLIiC Appendix A (docs/design.md §3), each with a stable rule name.

Labels are compared without ``^-``. Rule names are the keys of ``ExtractionResult.rejections`` (and of
the raw rejection counts users tune extraction on), so they must not change.
"""

from __future__ import annotations

from collections.abc import Callable

SEP = "___"
SUBJECT_LABELS = frozenset({"nsubj", "nsubjpass"})
# Interpretation (docs/design.md §3, rule 2): both end labels must be argument-like.
END_LABELS = frozenset(
    {"nsubj", "nsubjpass", "iobj", "dobj", "pobj", "appos", "poss", "rcmod", "infmod", "partmod"}
)
FORBIDDEN_LABELS = frozenset({"parataxis", "pcomp", "csubj", "advcl", "ccomp"})
MAX_WORDS = 7
MAX_LABELS = 8
MIN_LETTERS = 3


def _split(path: str) -> tuple[list[str], list[str]]:
    elements = path.split(SEP) if path else []
    labels = [e[:-2] if e.endswith("^-") else e for e in elements[0::2]]
    return labels, elements[1::2]


def rule1_subject_end(labels: list[str], lemmas: list[str]) -> bool:
    """Rule 1: the path starts or ends with nsubj or nsubjpass."""
    return bool(labels) and (labels[0] in SUBJECT_LABELS or labels[-1] in SUBJECT_LABELS)


def rule2_end_labels(labels: list[str], lemmas: list[str]) -> bool:
    """Rule 2 (Interpretation): both end labels are argument labels (END_LABELS)."""
    return bool(labels) and labels[0] in END_LABELS and labels[-1] in END_LABELS


def rule3_length(labels: list[str], lemmas: list[str]) -> bool:
    """Rule 3: at most 7 words (lemmas) and 8 labels."""
    return len(lemmas) <= MAX_WORDS and len(labels) <= MAX_LABELS


def rule4_short_lemmas(labels: list[str], lemmas: list[str]) -> bool:
    """Rule 4: at least one lemma has 3 or more letters."""
    return any(sum(c.isalpha() for c in lemma) >= MIN_LETTERS for lemma in lemmas)


def rule5_same_end_labels(labels: list[str], lemmas: list[str]) -> bool:
    """Rule 5: the two end labels differ."""
    return bool(labels) and labels[0] != labels[-1]


def rule6_forbidden_label(labels: list[str], lemmas: list[str]) -> bool:
    """Rule 6: no parataxis, pcomp, csubj, advcl or ccomp edge."""
    return not any(label in FORBIDDEN_LABELS for label in labels)


def rule7_repetition(labels: list[str], lemmas: list[str]) -> bool:
    """Rule 7: no immediate repetition of a word (consecutive lemmas) or a label (consecutive labels)."""
    return all(a != b for a, b in zip(lemmas, lemmas[1:], strict=False)) and all(
        a != b for a, b in zip(labels, labels[1:], strict=False)
    )


RULES: tuple[tuple[str, Callable[[list[str], list[str]], bool]], ...] = (
    ("rule1_subject_end", rule1_subject_end),
    ("rule2_end_labels", rule2_end_labels),
    ("rule3_length", rule3_length),
    ("rule4_short_lemmas", rule4_short_lemmas),
    ("rule5_same_end_labels", rule5_same_end_labels),
    ("rule6_forbidden_label", rule6_forbidden_label),
    ("rule7_repetition", rule7_repetition),
)
RULE_NAMES: tuple[str, ...] = tuple(name for name, _ in RULES)


def violated_rules(path: str) -> list[str]:
    """Names of all Appendix-A rules the path violates (in rule order)."""
    labels, lemmas = _split(path)
    return [name for name, ok in RULES if not ok(labels, lemmas)]


def rejection_rule(path: str) -> str | None:
    """The first Appendix-A rule the path violates, or None if the path is kept."""
    labels, lemmas = _split(path)
    for name, ok in RULES:
        if not ok(labels, lemmas):
            return name
    return None
