"""spaCy NER applied to documents: mentions for plain text, NER types for linked mentions, extra mentions.

The loader parses every document once with the full pipeline (deppath.parsing.load_nlp(ner=True) when
NER is needed) and calls :func:`augment` with the parsed spaCy Doc before path extraction, so NER
costs no second pass.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from deppath.records import Document, Mention
from extract.formats.documents import normalise_name
from files.reading import MAX_ID_BYTES

if TYPE_CHECKING:
    from spacy.tokens import Doc

# Labels that name things (entities); numbers, dates and amounts are not entities of the graph.
ENTITY_LABELS = frozenset(
    {"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"}
)


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def augment(document: Document, parsed: Doc, *, add_mentions: bool, type_mentions: bool) -> Document:
    """The document with NER applied.

    type_mentions: a mention without inline types gets the label of the entity-labelled NER span
    overlapping it most (the document's type_source becomes ``ner``; the loader keeps the majority
    label per entity). add_mentions: NER spans overlapping no existing mention become mentions of
    entity ``normalise_name(span text)`` (see files.reading) with the NER label as type.
    """
    spans = [(e.start_char, e.end_char, e.label_, e.text) for e in parsed.ents if e.label_ in ENTITY_LABELS]
    mentions = list(document.mentions)
    typed_any = False
    if type_mentions:
        for i, m in enumerate(mentions):
            if m.types:
                continue
            best = max(spans, key=lambda s: _overlap((m.start, m.end), s[:2]), default=None)
            if best is not None and _overlap((m.start, m.end), best[:2]) > 0:
                mentions[i] = replace(m, types=(best[2],))
                typed_any = True
    if add_mentions:
        for start, end, label, text in spans:
            if any(_overlap((m.start, m.end), (start, end)) for m in document.mentions):
                continue
            entity = normalise_name(text)
            if entity and len(entity.encode("utf-8")) <= MAX_ID_BYTES:  # longer: not an id (index limit)
                mentions.append(Mention(start, end, entity, " ".join(text.split()), (label,)))
                typed_any = True
    if not typed_any and len(mentions) == len(document.mentions):
        return document
    mentions.sort(key=lambda m: (m.start, m.end))
    source = "ner" if typed_any else document.type_source
    return replace(document, mentions=tuple(mentions), type_source=source)
