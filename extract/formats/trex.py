"""T-REx facts as distributed with LAMA (`--format trex`).

JSON lines, one fact per line::

    {"uuid": "...", "sub_uri": "Q7251", "sub_label": "Alan Turing", "obj_uri": "Q8078", "obj_label": "logic",
     "predicate_id": "P101",
     "evidences": [{"sub_surface": "Turing", "obj_surface": "logician",
                    "masked_sentence": "... Turing was a British mathematician, [MASK], ..."}]}

Each distinct evidence sentence becomes one document (id ``<uuid>:<evidence index>``; repeated
identical evidences of one fact are read once). Every ``[MASK]`` is replaced by ``obj_surface`` and
becomes a mention of ``obj_uri``; the subject is the first whole-word, case-sensitive occurrence
of ``sub_surface`` (else of ``sub_label``) outside the object spans, linked to ``sub_uri``. Entity
names are the KG labels. Evidences whose subject is not found are still read (with the object
mention only) and counted as ``subject_not_found`` in the reader statistics.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from deppath.records import Document, Mention
from extract.formats.base import CorpusReader
from extract.formats.documents import find_surface
from files.reading import ErrorHandler, json_lines, optional, report, require
from warehouse.errors import InputError

MASK = "[MASK]"


def restore(masked: str, obj_surface: str) -> tuple[str, list[tuple[int, int]]]:
    """Replace every [MASK] by the object surface; return the text and the object spans."""
    pieces = masked.split(MASK)
    text_parts: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    for i, piece in enumerate(pieces):
        text_parts.append(piece)
        pos += len(piece)
        if i < len(pieces) - 1:
            spans.append((pos, pos + len(obj_surface)))
            text_parts.append(obj_surface)
            pos += len(obj_surface)
    return "".join(text_parts), spans


class TRExReader(CorpusReader):
    """T-REx facts as distributed with LAMA (`--format trex`)."""

    alignment = "expand"

    def read(
        self, path: Path, on_error: ErrorHandler = None, stats: Counter | None = None
    ) -> Iterator[Document]:
        path = Path(path)
        stats = stats if stats is not None else Counter()
        for line, obj in json_lines(path, on_error, repeats=stats):
            try:
                sub = require(obj, "sub_uri", str, path, line)
                obj_id = require(obj, "obj_uri", str, path, line)
                sub_label = optional(obj, "sub_label", str, path, line) or sub
                obj_label = optional(obj, "obj_label", str, path, line) or obj_id
                evidences = require(obj, "evidences", list, path, line)
                uid = optional(obj, "uuid", str, path, line) or f"{path.name}:{line}"
                seen: set[str] = set()
                docs = []
                for index, ev in enumerate(evidences):
                    if not isinstance(ev, dict):
                        raise InputError(str(path), line, f"evidences[{index}] must be an object")
                    masked = require(ev, "masked_sentence", str, path, line)
                    if masked in seen:
                        stats["duplicate_evidence"] += 1
                        continue
                    seen.add(masked)
                    obj_surface = optional(ev, "obj_surface", str, path, line) or obj_label
                    text, obj_spans = restore(masked, obj_surface)
                    if not obj_spans:
                        stats["no_mask"] += 1
                    sub_surface = optional(ev, "sub_surface", str, path, line) or ""
                    sub_spans = find_surface(text, [sub_surface, sub_label], obj_spans)
                    if sub_spans:
                        sub_spans = sub_spans[:1]
                    else:
                        stats["subject_not_found"] += 1
                    mentions = [Mention(s, e, sub, sub_label) for s, e in sub_spans]
                    mentions += [Mention(s, e, obj_id, obj_label) for s, e in obj_spans]
                    docs.append(
                        Document(f"{uid}:{index}", text, tuple(sorted(mentions, key=lambda m: m.start)), line)
                    )
                stats["evidences"] += len(docs)
                yield from docs
            except InputError as exc:
                report(exc, on_error)
