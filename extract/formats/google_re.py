"""Google-RE facts, LAMA version (`--format google_re`).

JSON lines, one judged fact per line::

    {"pred": "/people/person/place_of_birth", "sub": "/m/047fprg", "obj": "/m/04hqz",
     "sub_label": "Khatchig Mouradian", "sub_aliases": [], "obj_label": "Lebanon",
     "obj_aliases": ["Lebanese Republic", ...], "sub_w": null, "obj_w": "Q822",
     "evidences": [{"url": "http://en.wikipedia.org/wiki/...", "snippet": "Khatchig Mouradian is ..."}],
     "judgments": [...]}

Each evidence snippet becomes one document (id ``<uuid or file:line>:<evidence index>``); spaCy
splits it into sentences. Entity ids are the Freebase MIDs ``sub``/``obj`` (so Freebase-keyed type
tables such as textent apply directly). Objects that are not MIDs (the literal dates of
date_of_birth) are not entities and are skipped (counted as ``literal_object``).

Matching rule (mentions are not span-annotated in Google-RE): for each entity, the surface strings
are tried in order — the label, then the aliases longest first, then (subjects only) the label's
last word when the label has two or more words and that word is capitalised with ≥ 3 letters
(the surname: "Garry died ..." for "Charles Garry"). The first string that occurs gives the
mentions: all its whole-word, case-sensitive occurrences that do not overlap the other entity's
spans (the subject is matched first). Entities not found are counted (``subject_not_found``,
``object_not_found``) in the reader statistics that the loader stores with the batch.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from deppath.records import Document, Mention
from extract.formats.base import CorpusReader
from extract.formats.documents import find_surface
from files.reading import ErrorHandler, json_lines, optional, report, require, strings
from warehouse.errors import InputError

MID = re.compile(r"^/m/[0-9a-z_]+$")


def surname(label: str) -> list[str]:
    words = label.split()
    last = words[-1] if words else ""
    if len(words) >= 2 and len(last) >= 3 and last[:1].isupper() and last.isalpha():
        return [last]
    return []


def name_variants(name: str) -> list[str]:
    """A title-like name and its shorter spellings: without '(disambiguation)', before the first comma."""
    out = [name]
    bare = re.sub(r"\s*\([^)]*\)$", "", name).strip()
    out.append(bare)
    if "," in bare:
        out.append(bare.split(",")[0].strip())
    return [v for i, v in enumerate(out) if v and v not in out[:i]]


def match_entities(
    text: str,
    sub: tuple[str, str, Sequence[str]] | None,
    obj: tuple[str, str, Sequence[str]] | None,
    stats: Counter,
) -> list[Mention]:
    """Mentions of subject and object (id, name, surface candidates in order) in `text`."""
    mentions: list[Mention] = []
    taken: list[tuple[int, int]] = []
    for role, entity in (("subject", sub), ("object", obj)):
        if entity is None:
            continue
        entity_id, name, surfaces = entity
        spans = find_surface(text, surfaces, taken)
        if not spans:
            stats[f"{role}_not_found"] += 1
        taken.extend(spans)
        mentions.extend(Mention(s, e, entity_id, name) for s, e in spans)
    return sorted(mentions, key=lambda m: m.start)


def _aliases(obj: dict, key: str, path: Path, line: int) -> list[str]:
    value = strings(obj.get(key) or [], f"field '{key}'", path, line)
    return sorted(value, key=len, reverse=True)


class GoogleREReader(CorpusReader):
    """Google-RE facts, LAMA version (`--format google_re`)."""

    alignment = "expand"

    def read(
        self, path: Path, on_error: ErrorHandler = None, stats: Counter | None = None
    ) -> Iterator[Document]:
        path = Path(path)
        stats = stats if stats is not None else Counter()
        for line, rec in json_lines(path, on_error, repeats=stats):
            try:
                sub_id = require(rec, "sub", str, path, line)
                obj_id = require(rec, "obj", str, path, line)
                evidences = require(rec, "evidences", list, path, line)
                sub_label = optional(rec, "sub_label", str, path, line) or ""
                obj_label = optional(rec, "obj_label", str, path, line) or ""
                if not sub_label:
                    raise InputError(
                        str(path),
                        line,
                        "missing field 'sub_label' (use --format grec for the "
                        "original GREC files without labels)",
                    )
                sub = (
                    sub_id,
                    sub_label,
                    [
                        *name_variants(sub_label),
                        *_aliases(rec, "sub_aliases", path, line),
                        *surname(sub_label),
                    ],
                )
                obj = None
                if MID.match(obj_id):
                    obj = (
                        obj_id,
                        obj_label or obj_id,
                        [*name_variants(obj_label), *_aliases(rec, "obj_aliases", path, line)],
                    )
                else:
                    stats["literal_object"] += 1
                uid = optional(rec, "uuid", str, path, line) or f"{path.name}:{line}"
                for index, ev in enumerate(evidences):
                    if not isinstance(ev, dict):
                        raise InputError(str(path), line, f"evidences[{index}] must be an object")
                    snippet = require(ev, "snippet", str, path, line)
                    mentions = match_entities(snippet, sub, obj, stats)
                    stats["evidences"] += 1
                    yield Document(f"{uid}:{index}", snippet, tuple(mentions), line)
            except InputError as exc:
                report(exc, on_error)
