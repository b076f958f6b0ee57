"""The seven Appendix-A path filters (docs/design.md §3), positive and negative, and the real
SherLIiC-dev paths."""

from __future__ import annotations

import csv

import pytest

from deppath.filters import RULE_NAMES, rejection_rule, violated_rules

OK = "nsubj^-___lead___dobj"


def test_rule_names_are_stable():
    assert RULE_NAMES == (
        "rule1_subject_end",
        "rule2_end_labels",
        "rule3_length",
        "rule4_short_lemmas",
        "rule5_same_end_labels",
        "rule6_forbidden_label",
        "rule7_repetition",
    )


@pytest.mark.parametrize(
    "path",
    [
        OK,
        "pobj^-___by___prep^-___invade___nsubjpass",
        "nsubj^-___be___prep___at___pobj___war___prep___with___pobj",
        "poss^-___carrier___nsubj",
        "nsubj___city___partmod___use___prep___in___pobj",
        "rcmod___found___nsubj",
        "nsubj^-___team___infmod___beat___prep___in___pobj",
        "iobj^-___give___nsubj",
        "appos___chief___nsubj^-",
    ],
)
def test_kept_paths(path):
    assert rejection_rule(path) is None
    assert violated_rules(path) == []


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        # 1: no subject end
        ("poss^-___leader___appos", "rule1_subject_end"),
        ("dobj^-___meet___prep___in___pobj", "rule1_subject_end"),
        ("", "rule1_subject_end"),
        # 2: a subject end but the other end is not an argument label
        ("nsubj^-___lead___advmod", "rule2_end_labels"),
        ("nn^-___draft___nsubj", "rule2_end_labels"),
        # 3: 8 words / 9 labels
        (
            "nsubj^-___"
            + "___".join(f"w{i}abc___{'prep' if i % 2 else 'pobj'}" for i in range(7))
            + "___x___dobj",
            "rule3_length",
        ),
        # 4: no lemma with three letters
        ("nsubj^-___be___prep___of___pobj", "rule4_short_lemmas"),
        ("nsubj^-___be___dobj", "rule4_short_lemmas"),
        # 5: same end labels
        ("nsubj^-___meet___nsubj", "rule5_same_end_labels"),
        # 6: forbidden labels
        ("dobj^-___acquire___ccomp^-___announce___nsubj", "rule6_forbidden_label"),
        ("nsubj^-___say___parataxis___win___dobj", "rule6_forbidden_label"),
        ("nsubj^-___leave___advcl___meet___dobj", "rule6_forbidden_label"),
        ("nsubj^-___insist___prep___on___pcomp___meet___dobj", "rule6_forbidden_label"),
        ("csubj^-___worry___nsubj", "rule2_end_labels"),  # csubj end fails rule 2 first
        # 7: immediate repetition of a word or a label
        ("nsubj^-___want___xcomp___want___dobj", "rule7_repetition"),
        ("nsubj^-___have___dobj___war___dobj___peace___pobj", "rule7_repetition"),
        # a conj chain "A fights Spain and Italy" repeats conj
        ("nsubj^-___fight___conj___Spain___conj___Italy___dobj", "rule7_repetition"),
    ],
)
def test_rejected_paths(path, rule):
    assert rejection_rule(path) == rule
    assert violated_rules(path)[0] == rule


def test_rule3_boundary_exactly_seven_words_and_eight_labels():
    middle = "___".join(f"w{i}abc___{'prep' if i % 2 else 'pobj'}" for i in range(6))
    seven = f"nsubj^-___{middle}___last___dobj"
    assert len(seven.split("___")) == 15  # 8 labels, 7 lemmas
    assert rejection_rule(seven) is None


def test_all_sherliic_dev_paths_pass_rules_1_to_5_and_7(shared_data):
    with open(shared_data / "sherliic" / "dev.tsv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    paths = {p for r in rows for p in (r["premise_path"], r["hypothesis_path"])}
    assert len(paths) > 800
    violations = {p: violated_rules(p) for p in paths}
    assert {p: v for p, v in violations.items() if set(v) - {"rule6_forbidden_label"}} == {}
    rule6 = {p for p, v in violations.items() if v}
    assert rule6 == {p for p in paths if "ccomp" in p}
    assert rule6  # dev holds at least one of the three ccomp paths
