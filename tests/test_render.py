"""Rendering relations as English sentences (paper §3, Figure 1) and the exact-match rate against
SherLIiC-dev's own verbalisations."""

from __future__ import annotations

import pytest

from annotation.template_check import aspect_lexicon_estimate, check_templates, template_types, verb_form
from deppath.render import render_candidate, render_relation

# Template exact-match floor on the 944 templates of the shared SherLIiC-dev file (472 items with both
# templates); measured 90.8% = 857/944 (see `sherliic-annotate check-templates`; 90.5% = 854/944 before
# the classes of test_renderer_classes). Four templates read a state as an event ("is being located in"),
# which the renderer does not copy (docs/performance.md).
TEMPLATE_FLOOR = 0.90


@pytest.mark.parametrize(
    ("path", "types", "expected"),
    [
        # Figure 1 / §3: present progressive
        ("nsubj^-___grant___prep___to___pobj", ("orgf", "empl"), "orgf[A] is granting to empl[B]"),
        # SherLIiC orientation, reversed path: the subject (B) comes first
        ("dobj^-___fear___nsubj", ("region", "location"), "location[B] is fearing region[A]"),
        (
            "nsubj^-___trade___prep___with___pobj",
            ("region", "location"),
            "region[A] is trading with location[B]",
        ),
        # passive, as in the shared README: "B is being invaded by A"
        (
            "pobj^-___by___prep^-___invade___nsubjpass",
            ("military_combatant", "region"),
            "region[B] is being invaded by military_combatant[A]",
        ),
        (
            "nsubjpass^-___elect___dobj___President___prep___of___pobj",
            ("person", "location"),
            "person[A] is elected President of location[B]",
        ),
        # a passive's head is read by its participle: "based" is common, so not "is base in"; "homed" is
        # rare, so "home" stays a noun. A participle mostly used as an adjective names a state ("is based
        # in", not "is being based in"); other passives are events ("is being awarded to")
        (
            "nsubjpass^-___base___prep___in___pobj",
            ("company", "city"),
            "company[A] is based in city[B]",
        ),
        (
            "nsubjpass^-___award___prep___to___pobj",
            ("award", "person"),
            "award[A] is being awarded to person[B]",
        ),
        (
            "nsubjpass^-___home___prep___to___pobj",
            ("location", "company"),
            "location[A] is home to company[B]",
        ),
        # copular clauses (docs/design.md §3)
        ("nsubj^-___afraid___prep___of___pobj", ("person", "person"), "person[A] is afraid of person[B]"),
        ("nsubj^-___leader___poss", ("person", "location"), "person[A] is location[B] 's leader"),
        (
            "nsubj^-___be___prep___at___pobj___war___prep___with___pobj",
            ("location", "location"),
            "location[A] is at war with location[B]",
        ),
        (
            "nsubj^-___one___prep___of___pobj___city___poss",
            ("location", "location"),
            "location[A] is one of location[B] 's city",
        ),
        # complements
        ("nsubj^-___grant___iobj", ("orgf", "empl"), "orgf[A] is granting empl[B] something"),
        (
            "dobj^-___buy___xcomp^-___agree___nsubj",
            ("organization", "organization"),
            "organization[B] is agreeing to buy organization[A]",
        ),
        (
            "nsubj^-___language___partmod___speak___prep___in___pobj",
            ("language", "location"),
            "language[A] is language spoken in location[B]",
        ),
        (
            "nsubj^-___able___xcomp___join___dobj",
            ("person", "organization"),
            "person[A] is able to join organization[B]",
        ),
        # relative clause: simple present; stative verbs: simple present; unknown verb with object
        (
            "nsubj^-___acquire___rcmod^-",
            ("organization", "organization"),
            "organization[A] acquires organization[B]",
        ),
        ("dobj^-___hate___nsubj", ("location", "person"), "person[B] hates location[A]"),
        ("nsubj^-___outpace___dobj", ("employer", "employer"), "employer[A] is outpacing employer[B]"),
        # top type (no restriction) renders as a bare placeholder
        ("nsubj^-___meet___prep___with___pobj", ("thing", "person"), "[A] is meeting with person[B]"),
    ],
)
def test_paper_and_design_examples(path: str, types: tuple[str, str], expected: str) -> None:
    assert render_relation(path, *types).text == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        # simple present vs progressive: a relation ending in a relative clause ("B, which A wants") is in
        # the simple present, and its predicate is a verb even when the word is mostly a noun ("want")
        ("nsubj^-___want___rcmod^-", "[A] wants [B]"),
        ("rcmod___want___nsubj", "[B] wants [A]"),
        ("nsubj^-___sign___rcmod^-", "[A] signs [B]"),
        # ... stative verbs in the simple present; perception/relation verbs the templates use
        # progressively stay progressive
        ("nsubj^-___outnumber___dobj", "[A] outnumbers [B]"),
        ("nsubj^-___see___dobj", "[A] is seeing [B]"),
        ("nsubj^-___belong___prep___to___pobj", "[A] is belonging to [B]"),
        # passive: "is being V-ed" for a process, "is V-ed" for a state (a complement, or a participle
        # mostly used as an adjective)
        ("nsubjpass^-___invade___prep___by___pobj", "[A] is being invaded by [B]"),
        ("nsubjpass^-___acquire___prep___by___pobj", "[A] is being acquired by [B]"),
        ("nsubjpass^-___locate___prep___in___pobj", "[A] is located in [B]"),
        ("nsubjpass^-___headquarter___prep___in___pobj", "[A] is headquartered in [B]"),
        ("nsubjpass^-___bear___prep___in___pobj", "[A] is born in [B]"),
        ("pobj^-___on___prep^-___base___nsubjpass", "[B] is based on [A]"),
        (
            "nsubjpass^-___elect___xcomp___president___prep___of___pobj",
            "[A] is elected to be president of [B]",
        ),
        # noun/adjective vs verb readings: an ordinal or adverb reads like a noun ("is third in"), a word
        # whose -ing form is common is a verb ("is trading"), a noun-only word is copular
        ("nsubj^-___third___prep___in___pobj", "[A] is third in [B]"),
        ("nsubj^-___second___prep___to___pobj", "[A] is second to [B]"),
        ("nsubj^-___trade___prep___with___pobj", "[A] is trading with [B]"),
        ("nsubj^-___member___prep___of___pobj", "[A] is member of [B]"),
        # progressive where expected, British doubling of a final -l as in the templates
        ("nsubj^-___pummel___dobj", "[A] is pummelling [B]"),
        ("nsubj^-___travel___prep___to___pobj", "[A] is travelling to [B]"),
        ("nsubj^-___target___dobj", "[A] is targeting [B]"),
    ],
)
def test_renderer_classes(path: str, expected: str) -> None:
    assert render_relation(path).text == expected


def test_split_into_sherliic_columns_and_instantiation() -> None:
    # the possessive end goes to the `end` column
    rendering = render_relation("nsubj^-___capital___poss", "city", "country")
    assert (rendering.argleft, rendering.middle, rendering.argright, rendering.end) == (
        "city[A]",
        "is",
        "country[B]",
        "'s capital",
    )
    assert rendering.instantiate("Paris", "France") == "Paris is France 's capital"
    reversed_ = render_relation("dobj^-___fear___nsubj", "region", "location")
    assert reversed_.left_letter == "B"
    assert reversed_.instantiate("Russia", "Cuba") == "Cuba is fearing Russia"


def test_crossed_alignment_swaps_hypothesis_letters() -> None:
    # "A is seeking from B ⇒ B is giving to A" (docs/design.md §3): both paths canonical, alignment crossed
    premise, hypothesis = render_candidate(
        "nsubj^-___seek___prep___from___pobj",
        ("person", "organization"),
        "nsubj^-___give___prep___to___pobj",
        ("organization", "person"),
        "crossed",
    )
    assert premise.text == "person[A] is seeking from organization[B]"
    assert hypothesis.text == "organization[B] is giving to person[A]"
    _, straight = render_candidate(
        "nsubj^-___seek___prep___from___pobj",
        ("person", "organization"),
        "nsubj^-___ask___prep___for___pobj",
        ("person", "organization"),
        "straight",
    )
    assert straight.text == "person[A] is asking for organization[B]"
    with pytest.raises(ValueError, match="alignment"):
        render_candidate("nsubj^-___a___dobj", (None, None), "nsubj^-___b___dobj", (None, None), "sideways")


def test_malformed_path_is_rejected() -> None:
    for bad in ("", "nsubj", "nsubj^-___lead"):
        with pytest.raises(ValueError, match="not a dependency path"):
            render_relation(bad)


def test_template_types() -> None:
    assert template_types("person*politician[B] is elected to be President of [A]") == {
        "B": "person*politician",
        "A": "",
    }


def test_exact_match_against_sherliic_dev_templates(shared_data) -> None:
    result = check_templates(shared_data / "sherliic" / "dev.tsv")
    assert result.n_templates == 944  # 472 items with both templates
    assert result.n_items == 472
    assert result.rate >= TEMPLATE_FLOOR, (
        f"exact match {result.rate:.1%} < floor {TEMPLATE_FLOOR:.0%}; classes: {result.classes.most_common()}"
    )


def test_verb_forms_of_templates() -> None:
    assert verb_form("region[B] is being attacked by military_combatant[A]") == "passive progressive"
    assert verb_form("region[A] is trading with location[B]") == "is"
    assert verb_form("employer[B] has advantage over employer[A]") == "simple present"


def test_a_form_lexicon_fitted_to_dev_does_not_carry_to_held_out_items(shared_data) -> None:
    """docs/performance.md: the remaining template differences are lexical and contradict each other across
    items, so a lexicon of predicate forms fitted to dev scores far less on held-out items (5 item folds)."""
    estimate = aspect_lexicon_estimate(shared_data / "sherliic" / "dev.tsv")
    assert (estimate.n_templates, estimate.in_sample, estimate.held_out) == (944, 902, 866)
