"""Fidelity of our path extraction on SherLIiC-dev: re-derive the benchmark's paths from its sentences."""

from __future__ import annotations

from benchmarks.fidelity import (
    _locate_with_template,
    _names_without_template,
    expresses_path,
    sherliic_fidelity,
)

# Measured 89.3% (1779/1992 located sides) on the current dev.tsv, whose templates are withheld for 524
# items (names are then read from the sentences); the floor leaves ~1 point for parser noise.
FLOOR = 0.883


def test_sherliic_dev_fidelity_floor(shared_data):
    report = sherliic_fidelity(shared_data)
    assert report["sides_total"] == 2 * 996
    assert report["sides_located"] >= 0.99 * report["sides_total"]
    assert report["exact_match_rate"] >= FLOOR, report["failure_classes"]
    assert report["exact_match_rate_expressible"] >= report["exact_match_rate"]
    assert sum(report["failure_classes"].values()) == report["sides_located"] - report["exact_matches"]


def test_mentions_from_template():
    text, spans, repaired = _locate_with_template(
        "region[A] is trading with location[B]", "Russia is trading with Cuba"
    )
    assert not repaired and text[slice(*spans["A"])] == "Russia" and text[slice(*spans["B"])] == "Cuba"
    # released sentences drop a possessive ending: names read from them, the full template parsed
    text, spans, repaired = _locate_with_template(
        "organization[B] is region[A] 's carrier", "Gulf Air is Croatia"
    )
    assert repaired and text == "Gulf Air is Croatia's carrier"
    assert text[slice(*spans["A"])] == "Croatia" and text[slice(*spans["B"])] == "Gulf Air"
    assert _locate_with_template("region[A] is trading with location[B]", "Russia trades Cuba") is None


def test_mentions_without_template():
    assert _names_without_template("England is fighting with Iran", "England is ally with Iran") == (
        "England",
        "Iran",
    )
    assert _names_without_template(
        "Democratic Party is needing Hewlett-Packard", "Hewlett-Packard is taking Democratic Party"
    ) == ("Democratic Party", "Hewlett-Packard")
    assert _names_without_template(
        "Republican Party is conceding to Republican Party", "Republican Party is taking Republican Party"
    ) == ("Republican Party", "Republican Party")


def test_expresses_path():
    assert expresses_path("nsubj^-___lead___dobj", "Bezos leads Amazon")
    assert not expresses_path("nsubj^-___want___rcmod^-", "Google wants AOL")
    assert not expresses_path("nsubj___city___prep___in___pobj", "Chicago is city in Illinois")
    assert not expresses_path("poss^-___carrier___nsubj", "Gulf Air is Croatia")
    assert not expresses_path("nsubj^-___give___iobj", "Google is giving Yahoo!")
    assert expresses_path("nsubj^-___give___iobj", "Google is giving Yahoo! something")
