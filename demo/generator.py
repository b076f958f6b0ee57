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

:data:`demo.relations.PLANTED_RULES` exposes the planted entailments as canonical warehouse paths
(subject on the left, docs/design.md §3) with their alignment, so the demo can measure how many of them
end up among the inference candidates. Every template's path was checked against the real extractor
(:func:`demo.verification.verify_templates`; pinned by tests/test_demo.py): only templates whose parse
gives the intended path are kept.

The stages, one module each: :mod:`demo.relations` (relations, templates, planted rules),
:mod:`demo.world` (entities and facts), :mod:`demo.sentences` (rendering), this module (documents and
the files) and :mod:`demo.verification` (templates against the extractor, expected scores).

Sizes: with the default ``size`` (facts per planted premise) each premise has ~``size`` entity pairs,
its hypothesis ~1.4·``size``, sharing 0.8·``size``. With |E| ≈ 1000 entities this gives
Relv ≈ 0.8·size·|E|²/(size·1.4·size) ≈ 10⁴ at size 50 (threshold 1000), σ ≈ 2·|A∩B|·(0.8·ln Relv
− 0.3) ≈ 400 (threshold 15) and esr ≈ 1 (threshold 0.6, pairs are drawn with distinct entities
where the pools allow), so the paper's default thresholds accept the planted rules.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from demo.sentences import render_facts, render_singles
from demo.world import Fact, build_world, draw_facts

DEFAULT_SIZE = 50
DEFAULT_SEED = 7
MIN_SIZE = 8  # planted rules need |A∩B| ≥ r_min = 5 (0.8·size shared facts)


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
