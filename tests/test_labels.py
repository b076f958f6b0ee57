"""The ClearNLP → Stanford basic label table and the Universal-Dependencies check (docs/design.md §3)."""

from __future__ import annotations

import pytest

from deppath.labels import CLEAR_TO_STANFORD, STANFORD_LABELS, check_label_set, stanford_label
from deppath.paths import DepSentence, DepToken


@pytest.mark.parametrize(
    ("label", "tag", "kw", "expected"),
    [
        ("relcl", "VBD", {}, "rcmod"),
        ("compound", "NNP", {}, "nn"),
        ("agent", "IN", {}, "prep"),
        ("nummod", "CD", {}, "num"),
        ("case", "POS", {}, "possessive"),
        ("ROOT", "VBZ", {}, "root"),
        ("acl", "VBN", {}, "partmod"),
        ("acl", "VBG", {}, "partmod"),
        ("acl", "VB", {"has_to_marker": True}, "infmod"),
        ("acl", "NN", {}, "dep"),
        ("dative", "NNP", {}, "iobj"),
        ("dative", "IN", {"has_pobj": True}, "prep"),  # "giving to India"
        ("dative", "IN", {}, "prep"),
        # shared labels pass through
        ("nsubj", "NNP", {}, "nsubj"),
        ("nsubjpass", "NNP", {}, "nsubjpass"),
        ("dobj", "NNP", {}, "dobj"),
        ("pobj", "NNP", {}, "pobj"),
        ("poss", "NNP", {}, "poss"),
        ("appos", "NNP", {}, "appos"),
        ("xcomp", "VB", {}, "xcomp"),
        ("ccomp", "VBD", {}, "ccomp"),
    ],
)
def test_stanford_label(label, tag, kw, expected):
    assert stanford_label(label, tag, **kw) == expected


def test_table_targets_are_stanford_labels():
    assert set(CLEAR_TO_STANFORD.values()) <= STANFORD_LABELS
    assert not set(CLEAR_TO_STANFORD) & {"nsubj", "dobj", "pobj", "prep", "poss", "appos"}


def test_conversion_applies_table_in_context():
    # "India is giving to Pakistan, the company founded by Ann": dative "to" → prep; acl VBN → partmod;
    # agent → prep
    toks = [
        DepToken("India", "India", "NNP", "nsubj", 2),
        DepToken("is", "be", "VBZ", "aux", 2),
        DepToken("giving", "give", "VBG", "ROOT", -1),
        DepToken("to", "to", "IN", "dative", 2),
        DepToken("Pakistan", "Pakistan", "NNP", "pobj", 3),
        DepToken("founded", "found", "VBN", "acl", 4),
        DepToken("by", "by", "IN", "agent", 5),
        DepToken("Ann", "Ann", "NNP", "pobj", 6),
    ]
    st = DepSentence(toks).stanford
    assert [t.dep for t in st.tokens] == ["nsubj", "aux", "root", "prep", "pobj", "partmod", "prep", "pobj"]


def test_check_label_set_rejects_universal_dependencies():
    assert check_label_set(["nsubj", "obj", "obl"]) == "obj"
    assert check_label_set(["root", "nsubj:pass", "aux:pass"]) == "nsubj:pass"
    assert check_label_set(["nsubj", "obl:tmod"]) == "obl:tmod"
    assert check_label_set(["nsubj", "case", "nmod"]) == "case"  # UD: case-marked nominals, no prep
    assert check_label_set(["nsubj", "flat", "compound"]) == "flat"


def test_check_label_set_accepts_clearnlp_and_stanford():
    assert check_label_set(["ROOT", "nsubj", "dobj", "prep", "pobj", "poss", "case", "compound"]) is None
    assert check_label_set(["root", "nsubj", "cop", "nn", "rcmod", "partmod", "possessive"]) is None
    assert check_label_set([]) is None
