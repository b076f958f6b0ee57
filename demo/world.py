"""The demo's made-up world (people, companies, countries with their cities, sports teams, universities)
and the facts drawn in it: per relation, pairs of entities; planted pairs share most of their facts."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from demo.relations import NOISE_RELATIONS, PLANTED, RELATIONS

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


def draw_pairs(
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
    for p_name, h_name, semantic in PLANTED:
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
            drawn = draw_pairs(rng, world[p_rel.kind_a], world[p_rel.kind_b], n, set())
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
        facts[name] = draw_pairs(rng, world[rel.kind_a], world[rel.kind_b], size, set())
    return facts
