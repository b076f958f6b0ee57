"""Rendering facts as English sentences: a template filled with the entities' names, the mentions'
character offsets computed while filling (so they are exact)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from demo.relations import RELATIONS, SINGLE_TEMPLATES
from demo.world import Entity, Fact


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
