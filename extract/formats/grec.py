"""The original Google Relation Extraction Corpus files (`--format grec`).

JSON lines, one judged fact per line, without labels::

    {"pred": "/people/deceased_person/place_of_death", "sub": "/m/0fn28k", "obj": "/m/0ftfw",
     "evidences": [{"url": "http://en.wikipedia.org/wiki/To%C3%B1o_Salazar",
                    "snippet": "Toño Salazar died in 1986 in San Salvador ..."}],
     "judgments": [{"rater": "...", "judgment": "yes"}, ...]}

Entity ids are the Freebase MIDs. Names come from: the subject's Wikipedia page title in the
evidence URL (``To%C3%B1o_Salazar`` → ``Toño Salazar``); spans marked ``((NAM: Bachelor of
Science))`` in the snippet (the markup is removed; a marked span is the object); and the optional
``names`` mapping MID → name given by the caller (``sherliic-extract real`` passes the textent
table's Wikipedia titles). Literal objects (dates) are skipped. Mentions are then found with the
Google-RE matching rule (see extract.formats.google_re); misses are counted in the statistics.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

from deppath.records import Document
from extract.formats.base import CorpusReader
from extract.formats.google_re import MID, match_entities, name_variants, surname
from files.reading import ErrorHandler, json_lines, optional, report, require
from warehouse.errors import InputError

MARKUP = re.compile(r"\(\(([A-Z]+): ?(.*?)\)\)")


def strip_markup(snippet: str) -> tuple[str, list[str]]:
    """Remove ((TYPE: text)) markup; return the clean text and the marked surface strings."""
    marked = [m.group(2).strip() for m in MARKUP.finditer(snippet)]
    return MARKUP.sub(lambda m: m.group(2).strip(), snippet), marked


def title_from_url(page: str) -> str:
    """The title of a Wikipedia page from its address (``…/wiki/To%C3%B1o_Salazar`` → ``Toño Salazar``)."""
    path = urlparse(page).path
    if "/wiki/" not in path:
        return ""
    return unquote(path.split("/wiki/", 1)[1]).replace("_", " ").strip()


class GRECReader(CorpusReader):
    """The original Google Relation Extraction Corpus files (`--format grec`)."""

    alignment = "expand"

    def __init__(self, *, names: Mapping[str, str] | None = None):
        self.names = names

    def read(
        self, path: Path, on_error: ErrorHandler = None, stats: Counter | None = None
    ) -> Iterator[Document]:
        names = self.names
        path = Path(path)
        stats = stats if stats is not None else Counter()
        names = names or {}
        for line, rec in json_lines(path, on_error, repeats=stats):
            try:
                sub_id = require(rec, "sub", str, path, line)
                obj_id = require(rec, "obj", str, path, line)
                evidences = require(rec, "evidences", list, path, line)
                is_mid = bool(MID.match(obj_id))
                if not is_mid:
                    stats["literal_object"] += 1
                for index, ev in enumerate(evidences):
                    if not isinstance(ev, dict):
                        raise InputError(str(path), line, f"evidences[{index}] must be an object")
                    text, marked = strip_markup(require(ev, "snippet", str, path, line))
                    url = optional(ev, "url", str, path, line) or ""
                    sub_name = names.get(sub_id) or title_from_url(url)
                    sub_bare = name_variants(sub_name)[-1] if sub_name else ""
                    sub = (
                        (sub_id, sub_name or sub_id, [*name_variants(sub_name), *surname(sub_bare)])
                        if sub_name
                        else None
                    )
                    if sub is None:
                        stats["subject_without_name"] += 1
                    obj = None
                    if is_mid:
                        obj_name = names.get(obj_id) or (marked[0] if marked else "")
                        if obj_name:
                            obj = (obj_id, obj_name, [*marked, *name_variants(obj_name)])
                        else:
                            stats["object_without_name"] += 1
                    stats["evidences"] += 1
                    yield Document(
                        f"{path.name}:{line}:{index}",
                        text,
                        tuple(match_entities(text, sub, obj, stats)),
                        line,
                    )
            except InputError as exc:
                report(exc, on_error)
