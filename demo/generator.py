"""A reproducible synthetic corpus for the demo (`sherliic-demo`) and the end-to-end tests.

The generator builds a small made-up world (people, companies, countries with their cities, sports
teams, universities), draws facts for a set of relations, and renders every fact as an English
sentence from several templates (tense, adverbs, time phrases, appositions, passive voice, relative
clauses). Relations come in planted pairs where one entails the other, either with the arguments
straight (`acquire ⇒ buy`) or crossed (`employ ⇒ work for`, the employee being the object of one and
the subject of the other), plus noise relations over random entity pairs.

Output, in the project's own formats:

- ``corpus.jsonl``: one document per line ``{"id", "text", "mentions": [{"start", "end", "entity",
  "name"}]}`` with character offsets (see :mod:`extract.formats.jsonl`);
- ``types.tsv``: ``entity<TAB>type``, several lines per entity possible; some entities have no type.

:data:`PLANTED_RULES` exposes the planted entailments as canonical warehouse paths (subject on the
left, docs/design.md §3) with their alignment, so the demo can measure how many of them end up among the
inference candidates. Every template's path was checked against the real extractor
(:func:`verify_templates`; pinned by tests/test_demo.py): only templates whose parse gives the intended
path are kept.

Sizes: with the default ``size`` (facts per planted premise) each premise has ~``size`` entity pairs,
its hypothesis ~1.4·``size``, sharing 0.8·``size``. With |E| ≈ 1000 entities this gives
Relv ≈ 0.8·size·|E|²/(size·1.4·size) ≈ 10⁴ at size 50 (threshold 1000), σ ≈ 2·|A∩B|·(0.8·ln Relv
− 0.3) ≈ 400 (threshold 15) and esr ≈ 1 (threshold 0.6, pairs are drawn with distinct entities
where the pools allow), so the paper's default thresholds accept the planted rules.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from deppath.records import Document, Mention
from warehouse.scores import esr, relv, sigma

DEFAULT_SIZE = 50
DEFAULT_SEED = 7
MIN_SIZE = 8  # planted rules need |A∩B| ≥ r_min = 5 (0.8·size shared facts)

# -- the made-up world ------------------------------------------------------------------------------

FIRST_NAMES = (
    "Ada Mara Jonas Elena Tomas Priya Samuel Ingrid Mateo Lucia Oskar Hana Daniel Leila Viktor Sofia "
    "Rafael Nadia Henrik Amara Felix Yara Emil Clara Idris Marta Lukas Noor Anton Greta Kofi Irene "
    "Pavel Selma Hugo Alma Tariq Vera Bruno Zofia"
).split()
LAST_NAMES = (
    "Kowalski Lindqvist Okafor Brandt Moreau Castellano Haddad Novak Petrov Sandoval Takeda Varga "
    "Whitfield Albrecht Ferreira Gallagher Holm Iversen Jankowski Kessler Larsen Mbeki Nakamura Ortega "
    "Pellegrini Quinlan Rasmussen Szabo Thorne Ulrich Valdez Weber Yilmaz Zeller Abbott Brennan "
    "Carvalho Dragomir Eklund Fontaine Grimaldi Hartmann Ivanova Jensen Kaur Lombardi Marsh Nilsen "
    "Osei Pereira"
).split()
# Syllables for invented proper names (companies, places).
_ONSETS = (
    "Nor Quen Alta Cor Del Ves Zan Tel Mir Lum Kor Sel Ver Dax Bri Hal Ost Pra Tor Ul Gal Ren Sor Var "
    "Bel Cas Dor Fen Gor Lin Mar Pel Ros Tam Vin Wes"
).split()
_CODAS = "vex ta avo vana mark ora ix ium eon ara tek lia dor wen".split()
_COMPANY_SUFFIXES = (
    "Systems Labs Robotics Industries Holdings Technologies Foods Energy Motors Pharma Logistics Media"
).split()
_COUNTRY_ENDINGS = "avia onia aria esia uria istan".split()
_CITY_ENDINGS = "burg ford ville mora port haven stad field".split()
_MASCOTS = "Hawks Comets Wolves Rangers Tigers Falcons Giants Pirates Bears Rockets Lions Sharks".split()
_UNIVERSITY_PATTERNS = ("{} University", "{} Institute of Technology", "{} College")

# Entity kinds with the types the type table gives them (FIGER-like names).
KIND_TYPES: dict[str, tuple[str, ...]] = {
    "person": ("person",),
    "company": ("organization", "company"),
    "team": ("organization", "sports_team"),
    "university": ("organization", "educational_institution"),
    "city": ("location", "city"),
    "country": ("location", "country"),
}
PERSON_SUBTYPES = ("athlete", "business_person", "politician", "scientist", "artist")
POOL_SIZES = {"person": 420, "company": 220, "team": 120, "university": 60, "country": 100}
CITIES_PER_COUNTRY = 3
UNTYPED_SHARE = 0.08  # entities without any type (only ⊤ matches them)


@dataclass(frozen=True)
class Entity:
    entity_id: str
    name: str
    kind: str
    types: tuple[str, ...]
    country: str | None = None  # cities: the country they lie in
    capital: bool = False  # cities: capital of their country


# -- relations, surface forms, templates ------------------------------------------------------------


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
_PLANTED: tuple[tuple[str, str, str], ...] = (
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
    for p, h, semantic in _PLANTED
)


def related_paths() -> dict[str, int]:
    """Path -> planted family index: paths of the two relations of one planted rule (all their forms)."""
    family: dict[str, int] = {}
    for i, (p, h, _) in enumerate(_PLANTED):
        for name in (p, h):
            for form in RELATIONS[name].forms:
                if form.path:
                    family[form.path] = i
    return family


def noise_paths() -> set[str]:
    return {f.path for name in NOISE_RELATIONS for f in RELATIONS[name].forms if f.path}


# -- world and facts -----------------------------------------------------------------------------------


def _invented_names(rng: random.Random, n: int, endings: Sequence[str], taken: set[str]) -> list[str]:
    names: list[str] = []
    while len(names) < n:
        stem = rng.choice(_ONSETS) + rng.choice(_CODAS)
        name = (stem + rng.choice(endings)) if endings else stem
        name = name[0].upper() + name[1:].lower()
        if re.search(r"(...).*\1", name.lower()):  # no "Maroramora": a repeated syllable reads badly
            continue
        if name not in taken:
            taken.add(name)
            names.append(name)
    return names


def _entity_id(kind: str, name: str) -> str:
    return f"demo:{kind}/{name.replace(' ', '_')}"


def build_world(rng: random.Random) -> dict[str, list[Entity]]:
    """Entity pools per kind; names unique across the whole world."""
    taken: set[str] = set()

    def typed(kind: str, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
        if rng.random() < UNTYPED_SHARE:
            return ()
        return KIND_TYPES[kind] + extra

    world: dict[str, list[Entity]] = {}
    people: list[Entity] = []
    full_names = [f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES]
    for name in rng.sample(full_names, POOL_SIZES["person"]):
        taken.add(name)
        extra = (rng.choice(PERSON_SUBTYPES),) if rng.random() < 0.6 else ()
        people.append(Entity(_entity_id("person", name), name, "person", typed("person", extra)))
    world["person"] = people

    stems = _invented_names(rng, POOL_SIZES["company"], (), taken)
    world["company"] = [
        Entity(_entity_id("company", n), n, "company", typed("company"))
        for n in (f"{s} {rng.choice(_COMPANY_SUFFIXES)}" for s in stems)
    ]
    countries = _invented_names(rng, POOL_SIZES["country"], _COUNTRY_ENDINGS, taken)
    world["country"] = [Entity(_entity_id("country", n), n, "country", typed("country")) for n in countries]
    cities: list[Entity] = []
    for country in world["country"]:
        for i, name in enumerate(_invented_names(rng, CITIES_PER_COUNTRY, _CITY_ENDINGS, taken)):
            cities.append(
                Entity(
                    _entity_id("city", name), name, "city", typed("city"), country.entity_id, capital=i == 0
                )
            )
    world["city"] = cities
    places = _invented_names(rng, POOL_SIZES["team"], _CITY_ENDINGS, taken)
    world["team"] = [
        Entity(_entity_id("team", n), n, "team", typed("team"))
        for n in (f"{p} {rng.choice(_MASCOTS)}" for p in places)
    ]
    stems = _invented_names(rng, POOL_SIZES["university"], (), taken)
    world["university"] = [
        Entity(_entity_id("university", n), n, "university", typed("university"))
        for n in (rng.choice(_UNIVERSITY_PATTERNS).format(s) for s in stems)
    ]
    return world


Fact = tuple[Entity, Entity]


def _draw_pairs(
    rng: random.Random, pool_a: list[Entity], pool_b: list[Entity], n: int, exclude: set[tuple[str, str]]
) -> list[Fact]:
    """n new distinct pairs, each entity used once while the pools last (keeps esr close to 1)."""
    a_order: list[Entity] = []
    b_order: list[Entity] = []
    pairs: list[Fact] = []
    seen = set(exclude)
    attempts = 0
    while len(pairs) < n:
        attempts += 1
        if attempts > 50 * (n + 10):
            raise ValueError(f"cannot draw {n} distinct pairs from pools of {len(pool_a)} x {len(pool_b)}")
        if not a_order:
            a_order = rng.sample(pool_a, len(pool_a))
        if not b_order:
            b_order = rng.sample(pool_b, len(pool_b))
        a, b = a_order.pop(), b_order.pop()
        key = (a.entity_id, b.entity_id)
        if a.entity_id == b.entity_id or key in seen:
            continue
        seen.add(key)
        pairs.append((a, b))
    return pairs


def _split_sizes(size: int) -> tuple[int, int, int]:
    """(shared, premise-only, hypothesis-only) fact counts of one planted rule."""
    shared = round(0.8 * size)
    return shared, size - shared, round(0.6 * size)


def draw_facts(rng: random.Random, world: dict[str, list[Entity]], size: int) -> dict[str, list[Fact]]:
    """Facts (a, b) per relation: planted pairs share most facts, noise relations get random pairs."""
    facts: dict[str, list[Fact]] = {}
    shared_n, p_only_n, h_only_n = _split_sizes(size)
    for p_name, h_name, semantic in _PLANTED:
        p_rel, h_rel = RELATIONS[p_name], RELATIONS[h_name]
        if p_name == "capital_of":
            # Geography: every country has exactly one capital; located_in adds non-capital cities.
            by_id = {c.entity_id: c for c in world["country"]}
            capitals = [(c, by_id[c.country]) for c in world["city"] if c.capital and c.country]
            others = [(c, by_id[c.country]) for c in world["city"] if not c.capital and c.country]
            capitals = rng.sample(capitals, min(len(capitals), size))
            shared = capitals[: min(shared_n, len(capitals))]
            p_only = capitals[len(shared) :]
            h_only = rng.sample(others, min(len(others), h_only_n))
        else:
            n = shared_n + p_only_n + h_only_n
            drawn = _draw_pairs(rng, world[p_rel.kind_a], world[p_rel.kind_b], n, set())
            shared, p_only = drawn[:shared_n], drawn[shared_n : shared_n + p_only_n]
            h_only = drawn[shared_n + p_only_n :]
        flip = (lambda fs: [(b, a) for a, b in fs]) if semantic == "crossed" else (lambda fs: list(fs))
        facts[p_name] = shared + p_only
        facts[h_name] = flip(shared) + flip(h_only)
        assert (h_rel.kind_a, h_rel.kind_b) == (
            (p_rel.kind_b, p_rel.kind_a) if semantic == "crossed" else (p_rel.kind_a, p_rel.kind_b)
        ), f"kinds of {p_name} and {h_name} do not line up"
    for name in NOISE_RELATIONS:
        rel = RELATIONS[name]
        facts[name] = _draw_pairs(rng, world[rel.kind_a], world[rel.kind_b], size, set())
    return facts


# -- rendering --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sentence:
    """A rendered sentence with its mentions (character offsets into text)."""

    text: str
    mentions: tuple[tuple[int, int, Entity], ...]
    relation: str | None = None
    form_index: int = 0


def render(template: str, a: Entity, b: Entity | None, year: int) -> Sentence:
    """Fill a template; mention offsets are computed while filling, so they are exact."""
    out: list[str] = []
    mentions: list[tuple[int, int, Entity]] = []
    pos = 0
    length = 0
    while pos < len(template):
        start = template.find("{", pos)
        if start < 0:
            out.append(template[pos:])
            break
        end = template.index("}", start)
        literal = template[pos:start]
        out.append(literal)
        length += len(literal)
        key = template[start + 1 : end]
        if key == "year":
            value, entity = str(year), None
        elif key in ("a", "b"):
            entity = a if key == "a" else b
            if entity is None:
                raise ValueError(f"template {template!r} needs {{b}}")
            value = entity.name
        else:
            raise ValueError(f"unknown placeholder {{{key}}} in template {template!r}")
        if entity is not None:
            mentions.append((length, length + len(value), entity))
        out.append(value)
        length += len(value)
        pos = end + 1
    text = "".join(out)
    # Sentence-initial "the" of team names: capitalise.
    if text.startswith("the "):
        text = "T" + text[1:]
    return Sentence(text, tuple(mentions))


def render_facts(rng: random.Random, facts: dict[str, list[Fact]]) -> list[Sentence]:
    """Every fact in its primary form; sometimes again, sometimes also in an alternative form."""
    sentences: list[Sentence] = []
    for name in sorted(facts):
        rel = RELATIONS[name]
        for a, b in facts[name]:
            renderings = [0]
            if rng.random() < 0.25:
                renderings.append(0)
            if len(rel.forms) > 1 and rng.random() < 0.4:
                renderings.append(rng.randrange(1, len(rel.forms)))
            for form_index in renderings:
                template = rng.choice(rel.forms[form_index].templates)
                s = render(template, a, b, rng.randrange(1950, 2024))
                sentences.append(Sentence(s.text, s.mentions, name, form_index))
    return sentences


def render_singles(rng: random.Random, world: dict[str, list[Entity]], n: int) -> list[Sentence]:
    kinds = sorted(SINGLE_TEMPLATES)
    out = []
    for _ in range(n):
        kind = rng.choice(kinds)
        template = rng.choice(SINGLE_TEMPLATES[kind])
        out.append(render(template, rng.choice(world[kind]), None, rng.randrange(1950, 2024)))
    return out


# -- the corpus -------------------------------------------------------------------------------------


@dataclass
class DemoCorpus:
    """What :func:`generate` produced: documents (JSON-ready), the type table and bookkeeping."""

    documents: list[dict]
    type_rows: list[tuple[str, str]]
    n_sentences: int
    n_entities: int
    facts: dict[str, list[Fact]] = field(default_factory=dict)


def generate(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> DemoCorpus:
    """Build the corpus in memory; the same (size, seed) always gives the same corpus."""
    if size < MIN_SIZE:
        raise ValueError(f"size must be at least {MIN_SIZE} (got {size}): planted rules need |A∩B| ≥ r_min")
    rng = random.Random(seed)
    world = build_world(rng)
    facts = draw_facts(rng, world, size)
    sentences = render_facts(rng, facts) + render_singles(rng, world, 4 * size)
    rng.shuffle(sentences)
    documents: list[dict] = []
    i = 0
    while i < len(sentences):
        group = sentences[i : i + rng.choice((1, 2, 2, 3))]
        i += len(group)
        text_parts: list[str] = []
        mentions: list[dict] = []
        offset = 0
        for s in group:
            for start, end, entity in s.mentions:
                mentions.append(
                    {
                        "start": offset + start,
                        "end": offset + end,
                        "entity": entity.entity_id,
                        "name": entity.name,
                    }
                )
            text_parts.append(s.text)
            offset += len(s.text) + 1
        doc_id = f"demo-{len(documents) + 1:05d}"
        documents.append({"id": doc_id, "text": " ".join(text_parts), "mentions": mentions})
    entities = [e for kind in sorted(world) for e in world[kind]]
    type_rows = [(e.entity_id, t) for e in entities for t in e.types]
    return DemoCorpus(documents, type_rows, len(sentences), len(entities), facts)


def write_corpus(
    out_dir: Path | str, size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED
) -> tuple[Path, Path, DemoCorpus]:
    """Write corpus.jsonl and types.tsv into out_dir; returns their paths and the corpus."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    corpus = generate(size, seed)
    corpus_path = out_dir / "corpus.jsonl"
    types_path = out_dir / "types.tsv"
    with corpus_path.open("w", encoding="utf-8") as handle:
        for doc in corpus.documents:
            handle.write(json.dumps(doc, ensure_ascii=False) + "\n")
    with types_path.open("w", encoding="utf-8") as handle:
        for entity_id, type_name in corpus.type_rows:
            handle.write(f"{entity_id}\t{type_name}\n")
    return corpus_path, types_path, corpus


# -- template verification against the real extractor ------------------------------------------------


@dataclass(frozen=True)
class TemplateCheck:
    relation: str
    form_index: int
    template: str
    expected: str  # canonical path, or "rejected:<rule>"
    n: int
    n_ok: int
    observed: dict[str, int]

    @property
    def share_ok(self) -> float:
        return self.n_ok / self.n if self.n else 0.0


def template_documents(samples: int = 6, seed: int = 1) -> Iterator[tuple[Document, str, int, str, str]]:
    """One single-sentence Document per (template, sample entity pair), with the expected outcome.

    Yields (document, relation name, form index, template, expected) where expected is the canonical
    path with arg1 = the form's subject, encoded as "path|arg1|arg2", or "rejected:<rule>".
    """
    rng = random.Random(seed)
    world = build_world(rng)
    line = 0
    for name in sorted(RELATIONS):
        rel = RELATIONS[name]
        pairs = _draw_pairs(rng, world[rel.kind_a], world[rel.kind_b], samples, set())
        for form_index, form in enumerate(rel.forms):
            for template in form.templates:
                for a, b in pairs:
                    s = render(template, a, b, rng.randrange(1950, 2024))
                    line += 1
                    mentions = tuple(Mention(st, en, e.entity_id, e.name) for st, en, e in s.mentions)
                    doc = Document(f"check-{line}", s.text, mentions, line)
                    if form.path is None:
                        expected = f"rejected:{form.rejected_by}"
                    else:
                        subj, obj = (a, b) if form.subject == "a" else (b, a)
                        expected = f"{form.path}|{subj.entity_id}|{obj.entity_id}"
                    yield doc, name, form_index, template, expected


def verify_templates(samples: int = 6, processes: int = 1) -> list[TemplateCheck]:
    """Run the real extractor on every template (several entity pairs each) and compare the a–b path."""
    from extract.pipeline import extract_documents

    items = list(template_documents(samples))
    by_id = {doc.document_id: (name, fi, tpl, exp) for doc, name, fi, tpl, exp in items}
    tallies: dict[tuple[str, int, str, str], dict[str, int]] = {}
    n_ok: dict[tuple[str, int, str, str], int] = {}
    for doc, result in extract_documents((d for d, *_ in items), processes=processes):
        name, fi, tpl, expected = by_id[doc.document_id]
        a_id, b_id = doc.mentions[0].entity_id, doc.mentions[1].entity_id
        got = [
            f"{i.path}|{i.arg1_entity_id}|{i.arg2_entity_id}"
            for i in result.instances
            if {i.arg1_entity_id, i.arg2_entity_id} == {a_id, b_id}
        ]
        if got:
            outcome = got[0]
        elif result.rejections:
            outcome = "rejected:" + ",".join(sorted(result.rejections))
        else:
            outcome = "no path"
        key = (name, fi, tpl, expected.split("|")[0])
        tally = tallies.setdefault(key, {})
        label = _outcome_label(outcome)
        if "|" in outcome and outcome != expected:
            label += " (arguments swapped)"
        tally[label] = tally.get(label, 0) + 1
        n_ok[key] = n_ok.get(key, 0) + (outcome == expected)
    return [
        TemplateCheck(name, fi, tpl, expected, sum(tally.values()), n_ok[(name, fi, tpl, expected)], tally)
        for (name, fi, tpl, expected), tally in tallies.items()
    ]


def _outcome_label(outcome: str) -> str:
    return outcome.split("|")[0] if "|" in outcome else outcome


def planted_paths() -> Iterable[str]:
    for rule in PLANTED_RULES:
        yield rule.premise_path
        yield rule.hypothesis_path


# -- expected scores (what the planted facts give if every sentence parses as intended) ---------------


@dataclass(frozen=True)
class ExpectedScore:
    """Untyped docs/design.md §5 scores of a path pair computed from the generated facts."""

    premise_size: int
    hypothesis_size: int
    overlap: int
    n_overlap_arg1: int
    n_overlap_arg2: int
    relv: float
    sigma: float
    esr: float


def path_pairs(facts: dict[str, list[Fact]], relation: str) -> set[tuple[str, str]]:
    """Entity pairs (arg1, arg2) of a relation's primary path: arg1 is the form's subject."""
    form = RELATIONS[relation].primary
    pairs = facts.get(relation, [])
    if form.subject == "a":
        return {(a.entity_id, b.entity_id) for a, b in pairs}
    return {(b.entity_id, a.entity_id) for a, b in pairs}


def scores(
    premise: set[tuple[str, str]],
    hypothesis: set[tuple[str, str]],
    n_entities: int,
    alignment: str = "straight",
) -> ExpectedScore:
    """Relv, σ and esr (docs/design.md §5, :mod:`warehouse.scores`) for two sets of entity pairs
    (crossed = B read (y, x))."""
    if alignment == "crossed":
        hypothesis = {(y, x) for x, y in hypothesis}
    overlap = premise & hypothesis
    a, b, ov = len(premise), len(hypothesis), len(overlap)
    arg1 = {x for x, _ in overlap}
    arg2 = {y for _, y in overlap}
    if not ov:
        return ExpectedScore(a, b, 0, 0, 0, 0.0, 0.0, 0.0)
    return ExpectedScore(
        a,
        b,
        ov,
        len(arg1),
        len(arg2),
        relv(ov, a, b, n_entities),
        sigma(ov, a, b, n_entities),
        esr(len(arg1 | arg2), ov),
    )


def expected_scores(corpus: DemoCorpus) -> dict[str, ExpectedScore]:
    """Per planted rule: untyped scores from the facts, |E| = entities occurring in some fact."""
    entities = {e.entity_id for pairs in corpus.facts.values() for pair in pairs for e in pair}
    return {
        rule.name: scores(
            path_pairs(corpus.facts, rule.premise),
            path_pairs(corpus.facts, rule.hypothesis),
            len(entities),
            rule.alignment,
        )
        for rule in PLANTED_RULES
    }
