"""The demo corpus generator (demo/: generator, relations, world, sentences, verification): determinism,
format, planted paths, expected scores."""

from __future__ import annotations

import itertools
import json

import pytest

from demo import generator
from demo.relations import PLANTED_RULES, RELATIONS, planted_paths
from demo.sentences import render
from demo.verification import expected_scores, path_pairs, scores, verify_templates
from demo.world import Entity
from deppath.paths import canonical_path
from extract.formats import reader
from extract.types import read_tsv


def test_generator_is_deterministic_for_a_seed(tmp_path):
    first, second, other = (
        generator.generate(20, seed=3),
        generator.generate(20, seed=3),
        generator.generate(20, seed=4),
    )
    assert first.documents == second.documents
    assert first.type_rows == second.type_rows
    assert first.documents != other.documents
    p1 = generator.write_corpus(tmp_path / "a", 20, 3)
    p2 = generator.write_corpus(tmp_path / "b", 20, 3)
    assert p1[0].read_bytes() == p2[0].read_bytes()
    assert p1[1].read_bytes() == p2[1].read_bytes()


def test_corpus_files_are_in_the_projects_formats(tmp_path):
    corpus_path, types_path, corpus = generator.write_corpus(tmp_path, 20, 5)
    docs = list(reader("jsonl").read(corpus_path))  # the loaders' own reader: raises on any malformed record
    assert len(docs) == len(corpus.documents) > 0
    first = json.loads(corpus_path.read_text().splitlines()[0])
    assert set(first) == {"id", "text", "mentions"}
    assert set(first["mentions"][0]) == {"start", "end", "entity", "name"}
    for doc in docs:
        for m in doc.mentions:
            assert doc.text[m.start : m.end] == m.name  # offsets cover exactly the entity's name
    rows = list(read_tsv(types_path))
    assert rows == corpus.type_rows
    typed = {e for e, _ in rows}
    mentioned = {m.entity_id for d in docs for m in d.mentions}
    assert mentioned - typed, "some entities must be untyped (only ⊤ matches them)"
    per_entity = {}
    for e, t in rows:
        per_entity.setdefault(e, set()).add(t)
    assert max(len(t) for t in per_entity.values()) >= 2, "entities carry several types"


def test_render_offsets_and_placeholders():
    a = Entity("demo:team/X", "Valmora Hawks", "team", ())
    b = Entity("demo:team/Y", "Ostport Comets", "team", ())
    s = render("In {year}, the {a} narrowly defeated the {b}.", a, b, 1999)
    assert s.text == "In 1999, the Valmora Hawks narrowly defeated the Ostport Comets."
    assert [s.text[st:en] for st, en, _ in s.mentions] == ["Valmora Hawks", "Ostport Comets"]
    with pytest.raises(ValueError, match="unknown placeholder"):
        render("{a} met {c}.", a, b, 2000)


def test_planted_rules_alignment():
    rules = {r.name: r for r in PLANTED_RULES}
    assert rules["acquire ⇒ buy"].alignment == "straight"
    assert rules["acquire ⇒ buy"].premise_path == "nsubj^-___acquire___dobj"
    # employ(company, person) ⇒ work_for(person, company): the arguments swap places.
    assert rules["employ ⇒ work_for"].alignment == "crossed"
    assert rules["sell_to ⇒ buy_from"].alignment == "crossed"
    # headed_by is passive (company is its subject), lead is active (person is its subject): crossed.
    assert rules["headed_by ⇒ lead"].alignment == "crossed"
    assert rules["capital_of ⇒ located_in"].hypothesis_path == "nsubjpass^-___locate___prep___in___pobj"
    assert sum(r.alignment == "crossed" for r in PLANTED_RULES) >= 3
    assert sum(r.alignment == "straight" for r in PLANTED_RULES) >= 3
    # every planted path is canonical (subject end on the left)
    for path in planted_paths():
        assert canonical_path(path) == (path, False)


def test_scores_formula_on_a_hand_computed_example():
    # A = {(1,2),(3,4),(5,6),(7,8)}, B = {(1,2),(3,4),(9,10)}, |E| = 10:
    # |A∩B| = 2, Relv = 2·100/(4·3) = 16.667, P(B|A) = 0.5, Relv(A,¬B) = 0.5/(1 − 3/100) = 0.51546,
    # σ = 2·2·(0.5·ln 16.667 + 0.5·ln 0.51546) = 4·(1.40671 − 0.33135) = 4.30144, esr = 4/4 = 1.
    a = {("1", "2"), ("3", "4"), ("5", "6"), ("7", "8")}
    b = {("1", "2"), ("3", "4"), ("9", "10")}
    s = scores(a, b, 10)
    assert (s.overlap, s.n_overlap_arg1, s.n_overlap_arg2) == (2, 2, 2)
    assert s.relv == pytest.approx(16.6667, rel=1e-4)
    assert s.sigma == pytest.approx(4.30144, rel=1e-4)
    assert s.esr == 1.0
    crossed = scores(a, {("2", "1"), ("4", "3")}, 10, "crossed")
    assert crossed.overlap == 2


def test_expected_scores_pass_the_paper_thresholds_and_noise_does_not():
    corpus = generator.generate(generator.DEFAULT_SIZE)
    for name, s in expected_scores(corpus).items():
        assert s.overlap >= 5 and s.n_overlap_arg1 >= 5 and s.n_overlap_arg2 >= 5, name
        assert s.relv >= 1000 and s.sigma >= 15 and s.esr >= 0.6, (name, s)
    # Any two relations that are not a planted pair share (far) fewer than r_min = 5 entity pairs.
    planted = {frozenset((r.premise, r.hypothesis)) for r in PLANTED_RULES}
    for x, y in itertools.combinations(sorted(RELATIONS), 2):
        if frozenset((x, y)) in planted:
            continue
        for alignment in ("straight", "crossed"):
            pairs_x, pairs_y = path_pairs(corpus.facts, x), path_pairs(corpus.facts, y)
            s = scores(pairs_x, pairs_y, 1000, alignment)
            assert s.overlap < 5, (x, y, alignment, s.overlap)


def test_size_is_validated():
    with pytest.raises(ValueError, match="size"):
        generator.generate(3)


def test_templates_parse_to_the_intended_paths():
    """Every template, rendered with several entity pairs, gives its intended canonical path (or rejection)
    under the real extractor (spaCy + deppath.parsing); parses of made-up names may fail now and then."""
    checks = verify_templates(samples=6)
    n_templates = sum(len(f.templates) for r in RELATIONS.values() for f in r.forms)
    assert len(checks) == n_templates
    bad = [c for c in checks if c.share_ok < 0.8]
    assert not bad, "\n".join(
        f"{c.relation}: {c.template!r} expected {c.expected}, got {c.observed}" for c in bad
    )
    # the planted paths themselves: well above that floor overall
    planted = set(planted_paths())
    primary = [c for c in checks if c.expected in planted]
    assert sum(c.n_ok for c in primary) / sum(c.n for c in primary) >= 0.95
    assert {c.expected for c in primary} == planted
