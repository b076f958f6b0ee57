"""The demo's relations: their surface forms (sentence templates with the canonical warehouse path each
yields), the planted entailments between them and the noise relations.

Relations come in planted pairs where one entails the other, either with the arguments straight
(`acquire ⇒ buy`) or crossed (`employ ⇒ work for`, the employee being the object of one and the subject
of the other), plus noise relations over random entity pairs. :data:`PLANTED_RULES` gives the planted
entailments as canonical warehouse paths (subject on the left, docs/design.md §3) with their alignment.
Every template's path was checked against the real extractor (:func:`demo.verification.verify_templates`;
pinned by tests/test_demo.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Form:
    """One surface form of a relation: its canonical warehouse path and the templates that yield it.

    ``subject`` names the fact argument ("a" or "b") that is the path's subject (its left end, arg1).
    ``path`` None marks a form whose path the Appendix-A filters reject (``rejected_by`` names the rule):
    such sentences feed the rejection counts only.
    Templates use ``{a}``/``{b}`` for the mentions and ``{year}`` for a filler year.
    """

    path: str | None
    subject: str
    templates: tuple[str, ...]
    rejected_by: str | None = None


@dataclass(frozen=True)
class Relation:
    """A relation between entity kinds (a, b); forms[0] is its primary surface form."""

    name: str
    kind_a: str
    kind_b: str
    forms: tuple[Form, ...]

    @property
    def primary(self) -> Form:
        return self.forms[0]


@dataclass(frozen=True)
class PlantedRule:
    """A planted entailment premise ⇒ hypothesis, as warehouse paths (canonical, subject left).

    alignment: 'straight' = premise(x,y) ⇒ hypothesis(x,y), 'crossed' = premise(x,y) ⇒ hypothesis(y,x),
    both over the paths' (arg1, arg2) = (subject end, other end).
    """

    name: str
    premise: str  # relation name
    hypothesis: str
    premise_path: str
    hypothesis_path: str
    alignment: str


def _f(path: str | None, subject: str, *templates: str, rejected_by: str | None = None) -> Form:
    return Form(path, subject, tuple(templates), rejected_by)


RELATIONS: dict[str, Relation] = {
    r.name: r
    for r in (
        # --- straight planted pairs ---
        Relation(
            "acquire",
            "company",
            "company",
            (
                _f(
                    "nsubj^-___acquire___dobj",
                    "a",
                    "{a} acquired {b}.",
                    "{a} has acquired {b}.",
                    "In {year}, {a} acquired {b}.",
                    "{a} quietly acquired {b} in {year}.",
                    "{a} acquired {b} for an undisclosed sum.",
                ),
                _f(
                    "nsubjpass^-___acquire___prep___by___pobj",
                    "b",
                    "{b} was acquired by {a}.",
                    "{b} was acquired by {a} in {year}.",
                ),
            ),
        ),
        Relation(
            "buy",
            "company",
            "company",
            (
                _f(
                    "nsubj^-___buy___dobj",
                    "a",
                    "{a} bought {b}.",
                    "{a} has bought {b}.",
                    "In {year}, {a} bought {b}.",
                    "{a} bought {b} last year.",
                    "{a} eventually bought {b} after long talks.",
                ),
                _f(
                    "nsubjpass^-___buy___prep___by___pobj",
                    "b",
                    "{b} was bought by {a}.",
                    "{b} was bought by {a} in {year}.",
                ),
            ),
        ),
        Relation(
            "capital_of",
            "city",
            "country",
            (
                _f(
                    "nsubj^-___capital___prep___of___pobj",
                    "a",
                    "{a} is the capital of {b}.",
                    "{a} has been the capital of {b} since {year}.",
                    "{a} was the capital of {b} in {year}.",
                    "In {year}, {a} was still the capital of {b}.",
                ),
                _f(
                    None,
                    "a",
                    "{a}, the capital of {b}, hosted a summit in {year}.",
                    rejected_by="rule1_subject_end",
                ),
            ),
        ),
        Relation(
            "located_in",
            "city",
            "country",
            (
                _f(
                    "nsubjpass^-___locate___prep___in___pobj",
                    "a",
                    "{a} is located in {b}.",
                    "{a} is located in northern {b}.",
                    "{a} is still located in {b}.",
                ),
            ),
        ),
        Relation(
            "defeat",
            "team",
            "team",
            (
                _f(
                    "nsubj^-___defeat___dobj",
                    "a",
                    "The {a} defeated the {b}.",
                    "The {a} defeated the {b} on Sunday.",
                    "In {year}, the {a} narrowly defeated the {b}.",
                    "The {a} have defeated the {b} again.",
                ),
                _f(
                    "nsubjpass^-___defeat___prep___by___pobj",
                    "b",
                    "The {b} were defeated by the {a}.",
                    "The {b} were defeated by the {a} in {year}.",
                ),
            ),
        ),
        Relation(
            "play_against",
            "team",
            "team",
            (
                _f(
                    "nsubj^-___play___prep___against___pobj",
                    "a",
                    "The {a} played against the {b}.",
                    "The {a} played against the {b} on Saturday.",
                    "In {year}, the {a} played against the {b}.",
                    "The {a} will play against the {b} next week.",
                ),
            ),
        ),
        Relation(
            "born_in",
            "person",
            "city",
            (
                _f(
                    "nsubjpass^-___bear___prep___in___pobj",
                    "a",
                    "{a} was born in {b}.",
                    "{a} was born in {b} in {year}.",
                    "In {year}, {a} was born in {b}.",
                ),
            ),
        ),
        Relation(
            "be_from",
            "person",
            "city",
            (
                _f(
                    "nsubj^-___be___prep___from___pobj",
                    "a",
                    "{a} is from {b}.",
                    "{a} is originally from {b}.",
                    "{a} is from {b}, according to friends.",
                ),
                _f(
                    "nsubj^-___come___prep___from___pobj",
                    "a",
                    "{a} comes from {b}.",
                    "{a} originally comes from {b}.",
                ),
            ),
        ),
        Relation(
            "graduate_from",
            "person",
            "university",
            (
                _f(
                    "nsubj^-___graduate___prep___from___pobj",
                    "a",
                    "{a} graduated from {b}.",
                    "{a} graduated from {b} in {year}.",
                    "In {year}, {a} graduated from {b}.",
                    "{a} graduated from {b} with honours.",
                ),
            ),
        ),
        Relation(
            "attend",
            "person",
            "university",
            (
                _f(
                    "nsubj^-___attend___dobj",
                    "a",
                    "{a} attended {b}.",
                    "{a} attended {b} for two years.",
                    "In {year}, {a} attended {b}.",
                ),
                _f(
                    "nsubj^-___study___prep___at___pobj",
                    "a",
                    "{a} studied at {b}.",
                    "{a} studied at {b} in {year}.",
                ),
            ),
        ),
        Relation(
            "chief_of",
            "person",
            "company",
            (
                _f(
                    "nsubj^-___executive___prep___of___pobj",
                    "a",
                    "{a} is the chief executive of {b}.",
                    "{a} was the chief executive of {b} in {year}.",
                    "{a} has been the chief executive of {b} since {year}.",
                ),
                _f(
                    None,
                    "a",
                    "{a}, the chief executive of {b}, declined to comment.",
                    rejected_by="rule1_subject_end",
                ),
            ),
        ),
        Relation(
            "run",
            "person",
            "company",
            (
                _f(
                    "nsubj^-___run___dobj",
                    "a",
                    "{a} runs {b}.",
                    "{a} ran {b} in {year}.",
                    "{a} has run {b} for years.",
                ),
            ),
        ),
        Relation(
            "invade",
            "country",
            "country",
            (
                _f(
                    "nsubj^-___invade___dobj",
                    "a",
                    "{a} invaded {b}.",
                    "In {year}, {a} invaded {b}.",
                    "{a} invaded {b} in {year}.",
                ),
                _f(
                    "nsubjpass^-___invade___prep___by___pobj",
                    "b",
                    "{b} was invaded by {a}.",
                    "{b} was invaded by {a} in {year}.",
                ),
            ),
        ),
        Relation(
            "attack",
            "country",
            "country",
            (
                _f(
                    "nsubj^-___attack___dobj",
                    "a",
                    "{a} attacked {b}.",
                    "In {year}, {a} attacked {b}.",
                    "{a} attacked {b} without warning.",
                ),
            ),
        ),
        # --- crossed planted pairs ---
        Relation(
            "sell_to",
            "company",
            "company",
            (
                _f(
                    "nsubj^-___sell___prep___to___pobj",
                    "a",
                    "{a} sells to {b}.",
                    "{a} has been selling to {b} since {year}.",
                    "{a} mainly sells to {b}.",
                ),
            ),
        ),
        Relation(
            "buy_from",
            "company",
            "company",
            (
                _f(
                    "nsubj^-___buy___prep___from___pobj",
                    "a",
                    "{a} buys from {b}.",
                    "{a} has been buying from {b} since {year}.",
                    "{a} mostly buys from {b}.",
                ),
            ),
        ),
        Relation(
            "employ",
            "company",
            "person",
            (
                _f(
                    "nsubj^-___employ___dobj",
                    "a",
                    "{a} employs {b}.",
                    "{a} employed {b} in {year}.",
                    "{a} has employed {b} since {year}.",
                ),
            ),
        ),
        Relation(
            "work_for",
            "person",
            "company",
            (
                _f(
                    "nsubj^-___work___prep___for___pobj",
                    "a",
                    "{a} works for {b}.",
                    "{a} has worked for {b} since {year}.",
                    "{a} worked for {b} in {year}.",
                    "{a} still works for {b}.",
                ),
            ),
        ),
        Relation(
            "headed_by",
            "company",
            "person",
            (
                _f(
                    "nsubjpass^-___head___prep___by___pobj",
                    "a",
                    "{a} is headed by {b}.",
                    "{a} was headed by {b} in {year}.",
                    "{a} has been headed by {b} since {year}.",
                ),
            ),
        ),
        Relation(
            "lead",
            "person",
            "company",
            (
                _f(
                    "nsubj^-___lead___dobj",
                    "a",
                    "{a} leads {b}.",
                    "{a} led {b} in {year}.",
                    "{a} has led {b} since {year}.",
                ),
            ),
        ),
        Relation(
            "hire",
            "company",
            "person",
            (
                _f(
                    "nsubj^-___hire___dobj",
                    "a",
                    "{a} hired {b}.",
                    "In {year}, {a} hired {b}.",
                    "{a} hired {b} last spring.",
                ),
            ),
        ),
        Relation(
            "join",
            "person",
            "company",
            (
                _f(
                    "nsubj^-___join___dobj",
                    "a",
                    "{a} joined {b}.",
                    "In {year}, {a} joined {b}.",
                    "{a} joined {b} as an engineer.",
                ),
            ),
        ),
        # --- noise: random entity pairs, no entailment planted ---
        Relation(
            "visit",
            "person",
            "city",
            (_f("nsubj^-___visit___dobj", "a", "{a} visited {b}.", "{a} visited {b} in {year}."),),
        ),
        Relation(
            "meet",
            "person",
            "person",
            (_f("nsubj^-___meet___dobj", "a", "{a} met {b}.", "{a} met {b} in {year}."),),
        ),
        Relation(
            "praise",
            "person",
            "company",
            (_f("nsubj^-___praise___dobj", "a", "{a} praised {b}.", "{a} publicly praised {b}."),),
        ),
        Relation(
            "sue",
            "company",
            "company",
            (_f("nsubj^-___sue___dobj", "a", "{a} sued {b}.", "In {year}, {a} sued {b}."),),
        ),
        Relation(
            "criticize",
            "person",
            "country",
            (_f("nsubj^-___criticize___dobj", "a", "{a} criticized {b}.", "{a} sharply criticized {b}."),),
        ),
        Relation(
            "sponsor",
            "company",
            "team",
            (
                _f(
                    "nsubj^-___sponsor___dobj",
                    "a",
                    "{a} sponsors the {b}.",
                    "{a} sponsored the {b} in {year}.",
                ),
            ),
        ),
        Relation(
            "finance",
            "company",
            "university",
            (_f("nsubj^-___finance___dobj", "a", "{a} financed {b}.", "In {year}, {a} financed {b}."),),
        ),
    )
}

# (premise, hypothesis, semantic alignment): straight = P(a,b) ⇒ H(a,b); crossed = P(a,b) ⇒ H(b,a).
PLANTED: tuple[tuple[str, str, str], ...] = (
    ("acquire", "buy", "straight"),
    ("capital_of", "located_in", "straight"),
    ("defeat", "play_against", "straight"),
    ("born_in", "be_from", "straight"),
    ("graduate_from", "attend", "straight"),
    ("chief_of", "run", "straight"),
    ("invade", "attack", "straight"),
    ("sell_to", "buy_from", "crossed"),
    ("employ", "work_for", "crossed"),
    ("headed_by", "lead", "crossed"),
    ("hire", "join", "crossed"),
)
NOISE_RELATIONS = ("visit", "meet", "praise", "sue", "criticize", "sponsor", "finance")

# Sentences with one mention only (no pair: realistic filler, counted as sentences).
SINGLE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "person": ("{a} declined to comment.", "{a} gave a speech on Monday.", "{a} retired in {year}."),
    "company": (
        "{a} reported record profits.",
        "Shares of {a} fell sharply in {year}.",
        "{a} opened a new plant.",
    ),
    "team": ("The {a} won the championship in {year}.", "The {a} signed a new coach."),
    "university": ("{a} was founded in {year}.", "{a} opened a new library."),
    "city": ("{a} hosted a jazz festival in {year}.", "Tourism in {a} grew quickly."),
    "country": ("{a} held elections in {year}.", "The economy of {a} grew in {year}."),
}


def _path_alignment(premise: Relation, hypothesis: Relation, semantic: str) -> str:
    """Alignment of the primary paths: does the premise's subject fill the hypothesis' subject slot?"""
    p_subject = premise.primary.subject  # fact argument that is the premise path's arg1
    h_subject = hypothesis.primary.subject
    if semantic == "crossed":  # P(a,b) ⇒ H(b,a): premise argument a is hypothesis argument b
        h_subject = {"a": "b", "b": "a"}[h_subject]
    return "straight" if p_subject == h_subject else "crossed"


PLANTED_RULES: tuple[PlantedRule, ...] = tuple(
    PlantedRule(
        name=f"{p} ⇒ {h}",
        premise=p,
        hypothesis=h,
        premise_path=RELATIONS[p].primary.path or "",
        hypothesis_path=RELATIONS[h].primary.path or "",
        alignment=_path_alignment(RELATIONS[p], RELATIONS[h], semantic),
    )
    for p, h, semantic in PLANTED
)


def related_paths() -> dict[str, int]:
    """Path -> planted family index: paths of the two relations of one planted rule (all their forms)."""
    family: dict[str, int] = {}
    for i, (p, h, _) in enumerate(PLANTED):
        for name in (p, h):
            for form in RELATIONS[name].forms:
                if form.path:
                    family[form.path] = i
    return family


def noise_paths() -> set[str]:
    return {f.path for name in NOISE_RELATIONS for f in RELATIONS[name].forms if f.path}


def planted_paths() -> Iterable[str]:
    for rule in PLANTED_RULES:
        yield rule.premise_path
        yield rule.hypothesis_path
