"""What the demo should find: every template checked against the real extractor, and the scores the
planted facts give if every sentence parses as intended."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from demo.generator import DemoCorpus
from demo.relations import PLANTED_RULES, RELATIONS
from demo.sentences import render
from demo.world import Fact, build_world, draw_pairs
from deppath.records import Document, Mention
from extract.pipeline import extract_documents
from teg.scores import esr, relv, sigma


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
        pairs = draw_pairs(rng, world[rel.kind_a], world[rel.kind_b], samples, set())
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
    """Relv, σ and esr (docs/design.md §5, :mod:`teg.scores`) for two sets of entity pairs
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
