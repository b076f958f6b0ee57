"""Document results → raw-schema rows: the one definition shared by the Postgres loader (COPY,
:mod:`extract.postgres_load`) and the Spark loader (:mod:`extract.spark_load`).

- :func:`document_rows`: a document's sentence rows (only sentences with a kept path, in the order of
  their first kept path) and its relation-instance rows, which point at a sentence by its position in
  that list (the loaders turn positions into sentence ids);
- :class:`Tally`: what a batch counts over its documents (documents, mentions, rejections per rule, the
  names and inline types seen per entity); tallies of parts of a batch merge (Spark partitions);
- :func:`entity_name` and :func:`inline_type_rows`: the batch's entity and entity-type rows from the
  merged name and type counts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from deppath.records import Document, ExtractionResult

# (document_id, line_number, sentence_index, text)
SentenceRow = tuple[str, int, int, str]
# (position of the sentence in the document's sentence rows, path, arg1, arg2, subject_side)
InstanceRow = tuple[int, str, str, str, int]


def document_rows(
    document: Document, result: ExtractionResult
) -> tuple[list[SentenceRow], list[InstanceRow]]:
    """The sentence rows and relation-instance rows of one document's result."""
    sentences: list[SentenceRow] = []
    instances: list[InstanceRow] = []
    position: dict[int, int] = {}
    for inst in result.instances:
        if inst.sentence_index not in position:
            position[inst.sentence_index] = len(sentences)
            sentences.append(
                (document.document_id, document.line_number, inst.sentence_index, inst.sentence_text)
            )
        instances.append(
            (
                position[inst.sentence_index],
                inst.path,
                inst.arg1_entity_id,
                inst.arg2_entity_id,
                inst.subject_side,
            )
        )
    return sentences, instances


@dataclass
class Tally:
    """Counts over a batch's documents (or a part of them)."""

    documents: int = 0
    mentions: int = 0
    rejections: Counter = field(default_factory=Counter)
    names: dict[str, Counter] = field(default_factory=dict)  # entity -> Counter(name)
    inline_types: dict[tuple[str, str], Counter] = field(default_factory=dict)  # (entity, source) -> types

    def add(self, document: Document, result: ExtractionResult) -> None:
        self.documents += 1
        self.mentions += len(document.mentions)
        for m in document.mentions:
            self.names.setdefault(m.entity_id, Counter())[m.name or document.text[m.start : m.end]] += 1
            for t in m.types:
                self.inline_types.setdefault((m.entity_id, document.type_source), Counter())[t] += 1
        self.rejections.update(result.rejections)

    def entity_rows(self) -> list[tuple[str, str]]:
        """(entity, name) per entity of this tally."""
        return [(entity, entity_name(counter)) for entity, counter in self.names.items()]

    def type_rows(self) -> list[tuple[str, str, str]]:
        """(entity, type, source) from the inline mention types of this tally."""
        return [
            row
            for (entity, source), counter in self.inline_types.items()
            for row in inline_type_rows(entity, source, counter)
        ]


def entity_name(names: Counter) -> str:
    """The entity's display name: the most frequent name wins (ties: alphabetical, reproducible loads)."""
    return min(names.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def inline_type_rows(entity: str, source: str, types: Counter) -> list[tuple[str, str, str]]:
    """Inline mention types → (entity, type, source). NER labels vary per mention: keep the majority
    label per entity (ties: alphabetical); curated corpus types are kept as given (all of them)."""
    if source == "ner":
        return [(entity, min(types.items(), key=lambda kv: (-kv[1], kv[0]))[0], source)]
    return [(entity, t, source) for t in sorted(types)]
