"""The project's own corpus format (`--format jsonl`).

One JSON object per line (UTF-8; blank lines are ignored)::

    {"id": "doc-1",
     "text": "Jeff Bezos founded Amazon in 1994.",
     "mentions": [{"start": 0, "end": 10, "entity": "Q312556", "name": "Jeff Bezos", "types": ["/person"]},
                  {"start": 19, "end": 25, "entity": "Q3884"}]}

- ``id`` (string, optional): document id, unique within the corpus; default ``<file name>:<line>``. A
  number, an empty string or ``null`` is refused (ids are strings), as is any key given twice.
- ``text`` (string, required): the document; may hold several sentences (spaCy splits them).
- ``mentions`` (list, required, may be empty): ``start``/``end`` are character offsets (Python
  string indices, end exclusive) into ``text``; ``entity`` (non-empty string, required) is the entity id
  (Wikidata QID, Freebase MID or any id of yours); ``name`` (optional) the display name, default
  the covered text; ``types`` (optional list of strings) types of the entity, stored with
  type_source ``corpus`` (or the value of a top-level ``"type_source"`` key on the line).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from deppath.records import Document, Mention
from extract.formats.base import CorpusReader
from extract.formats.documents import check_mention
from files.reading import ErrorHandler, json_lines, optional, report, require, strings
from warehouse.errors import InputError


def parse_record(obj: dict, path: Path, line: int) -> Document:
    text = require(obj, "text", str, path, line)
    raw_mentions = require(obj, "mentions", list, path, line)
    doc_id = None
    if "id" in obj:  # optional, but when given a string: 7 and "7" would be one id to some tools
        doc_id = require(obj, "id", str, path, line)
        if not doc_id.strip():
            raise InputError(str(path), line, "field 'id' is empty")
    mentions = []
    for i, raw in enumerate(raw_mentions):
        if not isinstance(raw, dict):
            raise InputError(str(path), line, f"mentions[{i}] must be an object")
        start = require(raw, "start", int, path, line)
        end = require(raw, "end", int, path, line)
        entity = require(raw, "entity", str, path, line)
        types = strings(raw.get("types") or [], f"mentions[{i}].types", path, line)
        name = optional(raw, "name", str, path, line)
        mention = Mention(start, end, entity, None, tuple(types))
        check_mention(text, mention, path, line)
        name = name or text[mention.start : mention.end]
        mentions.append(Mention(mention.start, mention.end, mention.entity_id, name, mention.types))
    type_source = optional(obj, "type_source", str, path, line) or "corpus"
    return Document(
        f"{path.name}:{line}" if doc_id is None else str(doc_id), text, tuple(mentions), line, type_source
    )


class JsonlReader(CorpusReader):
    """The project's own corpus format (`--format jsonl`)."""

    def read(
        self, path: Path, on_error: ErrorHandler = None, stats: Counter | None = None
    ) -> Iterator[Document]:
        path = Path(path)
        for line, obj in json_lines(path, on_error, repeats=stats if stats is not None else Counter()):
            try:
                yield parse_record(obj, path, line)
            except InputError as exc:
                report(exc, on_error)
