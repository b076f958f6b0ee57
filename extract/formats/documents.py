"""The checks every corpus reader's documents go through (one validation of ids, text and mention
offsets for all formats: :func:`check_document`) and the mention search of the readers that find
entities by name."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from deppath.records import Document, Mention
from files.reading import check_id, check_text, nfc
from warehouse.errors import InputError

# spaCy's own limit (nlp.max_length): longer texts are refused by the parser (and would need ~1 GB).
MAX_DOCUMENT_CHARS = 1_000_000


def check_document(document: Document, path: str | Path) -> Document:
    """The one validation of what every corpus reader yields: ids, text, names and types storable,
    ids non-empty and not too long, the text within the parser's limit, offsets inside the text."""
    line = document.line_number
    check_id(document.document_id, "document id", path, line)
    check_id(document.type_source, "type_source", path, line)
    if len(document.text) > MAX_DOCUMENT_CHARS:
        raise InputError(
            str(path),
            line,
            f"document {document.document_id!r} has {len(document.text):,} characters; the parser's limit "
            f"is {MAX_DOCUMENT_CHARS:,} (split it into smaller documents)",
        )
    check_text(document.text, "text", path, line)
    for mention in document.mentions:
        check_mention(document.text, mention, path, line)
        check_id(mention.entity_id, "entity id", path, line)
        if mention.name is not None:
            check_text(mention.name, f"name of entity {mention.entity_id!r}", path, line)
        for type_name in mention.types:
            check_id(type_name, f"type of entity {mention.entity_id!r}", path, line)
    return document


def check_mention(text: str, mention: Mention, path: Path, line: int) -> None:
    """Offsets (integers, not booleans) must lie inside the text and cover a non-empty span."""
    if not all(type(v) is int for v in (mention.start, mention.end)):
        raise InputError(str(path), line, f"mention offsets of entity {mention.entity_id!r} must be integers")
    if not (0 <= mention.start < mention.end <= len(text)):
        raise InputError(
            str(path),
            line,
            f"mention offsets [{mention.start}, {mention.end}) of entity {mention.entity_id!r} "
            f"outside the text (length {len(text)})",
        )


def normalise_name(name: str) -> str:
    """Entity id for unlinked (NER) mentions: lower-case, single spaces, no leading 'the'."""
    name = nfc(" ".join(name.split()).lower())
    name = re.sub(r"^the ", "", name)
    name = re.sub(r"'s$", "", name)
    return name


def find_surface(text: str, surfaces: Sequence[str], taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """All whole-word, case-sensitive occurrences of the first surface string that occurs in `text`.

    Surfaces are tried in the given order (callers put the label first, then aliases longest first);
    spans overlapping an already-taken span are skipped, so two entities never share characters.
    """
    for surface in surfaces:
        surface = surface.strip()
        if len(surface) < 2:
            continue
        pattern = re.compile(r"(?<!\w)" + re.escape(surface) + r"(?!\w)")
        spans = [
            (m.start(), m.end())
            for m in pattern.finditer(text)
            if not any(m.start() < e and s < m.end() for s, e in taken)
        ]
        if spans:
            return spans
    return []
