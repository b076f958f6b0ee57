"""Entity-type tables and type maps: readers for the formats the loader accepts.

Entity types (``sherliic-extract types --format F --type-source S FILE`` → raw.entity_types):

- ``tsv``: ``entity<TAB>type`` per line, Freebase style (``/m/0d6lp<TAB>/location/citytown``); an
  optional header line ``entity<TAB>type`` is skipped; blank lines and ``#`` comments are ignored.
  type_source ``tsv`` (the format: nothing in the file says where its types come from; name it with
  ``type_source=`` / ``--type-source``, e.g. ``freebase`` or ``wikidata``).
- ``ntriples``: Freebase RDF dump lines (N-Triples, tab or space separated); only triples with the
  predicate ``<http://rdf.freebase.com/ns/type.object.type>`` are used (others are counted as
  ``other_predicate`` and skipped): ``<…/ns/m.0d6lp>  <…/ns/type.object.type>  <…/ns/location.citytown> .``
  → entity ``/m/0d6lp``, type ``/location/citytown``. type_source ``freebase``.
- ``textent``: the textent/FIGER TSV with header ``freebase_id<TAB>wikipedia_title<TAB>types``; types
  are comma-separated FIGER types written with ``-`` (``location-city``) and are stored FIGER-style
  (``/location/city``). type_source ``figer``.

Type maps (``sherliic-extract type-map FILE`` → raw.type_mappings):

- ``figer_map``: ``freebase_type<TAB>figer_type`` (FIGER's ``types.map``).

For corpora linked to Wikidata (FewRel, T-REx) no KG types exist here; :func:`title_type_rows`
types their entities by joining the entity name with the textent table's Wikipedia titles
(type_source ``textent_title``); the loader's ``ner_types`` option adds NER labels (``ner``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from files.reading import ErrorHandler, check_id, nfc, read_lines, report
from warehouse.errors import InputError

TYPE_FORMATS = ("tsv", "ntriples", "textent")
# type_source when none is given: what the format itself says about its types (a plain TSV says nothing).
DEFAULT_SOURCE = {"tsv": "tsv", "ntriples": "freebase", "textent": "figer"}
TYPE_PREDICATE = "type.object.type"
_NT = re.compile(r"^\s*(<[^>]*>|\S+)\s+(<[^>]*>|\S+)\s+(<[^>]*>|\S+)\s*\.\s*$")


def figer_type(name: str) -> str:
    """textent's ``location-city`` → FIGER's ``/location/city``."""
    return "/" + name.strip().replace("-", "/")


def freebase_id(uri: str) -> str:
    """``<http://rdf.freebase.com/ns/m.0d6lp>`` / ``ns:m.0d6lp`` → ``/m/0d6lp`` (Freebase's slash form)."""
    uri = uri.strip()
    if uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1]
    local = re.split(r"[/#:]", uri)[-1]
    return "/" + local.replace(".", "/")


def read_tsv(path: Path, on_error: ErrorHandler = None) -> Iterator[tuple[str, str]]:
    for line, content in read_lines(path, on_error):
        if not content.strip() or content.startswith("#"):
            continue
        cols = content.split("\t")
        if line == 1 and [c.strip().lower() for c in cols] == ["entity", "type"]:
            continue
        if len(cols) != 2 or not cols[0].strip() or not cols[1].strip():
            report(
                InputError(str(path), line, f"expected 'entity<TAB>type', got {len(cols)} column(s)"),
                on_error,
            )
            continue
        row = _ids(path, line, on_error, entity=cols[0].strip(), type=cols[1].strip())
        if row is not None:
            yield row


def _ids(path: Path, line: int, on_error: ErrorHandler, **fields: str) -> tuple[str, ...] | None:
    """The fields in NFC if each is a valid identifier (:func:`check_id`); else the error is reported,
    None."""
    try:
        return tuple(
            nfc(check_id(value, name.replace("_", " "), path, line)) for name, value in fields.items()
        )
    except InputError as exc:
        report(exc, on_error)
        return None


def read_ntriples(
    path: Path, on_error: ErrorHandler = None, stats: dict | None = None
) -> Iterator[tuple[str, str]]:
    stats = stats if stats is not None else {}
    for line, content in read_lines(path, on_error):
        if not content.strip() or content.lstrip().startswith("#"):
            continue
        match = _NT.match(content)
        if match is None:
            report(
                InputError(str(path), line, "not an N-Triples line '<subject> <predicate> <object> .'"),
                on_error,
            )
            continue
        subject, predicate, obj = match.groups()
        if not predicate.strip("<>").endswith(TYPE_PREDICATE):
            stats["other_predicate"] = stats.get("other_predicate", 0) + 1
            continue
        row = _ids(path, line, on_error, entity=freebase_id(subject), type=freebase_id(obj))
        if row is not None:
            yield row


def read_textent(path: Path, on_error: ErrorHandler = None) -> Iterator[tuple[str, str, list[str]]]:
    """(freebase id, Wikipedia title, FIGER types) per row."""
    header_seen = False
    for line, content in read_lines(path, on_error):
        if not content.strip():
            continue
        cols = content.split("\t")
        if not header_seen:
            header_seen = True
            if [c.strip() for c in cols] != ["freebase_id", "wikipedia_title", "types"]:
                raise InputError(
                    str(path), line, "expected the header 'freebase_id<TAB>wikipedia_title<TAB>types'"
                )
            continue
        if len(cols) != 3 or not cols[0].strip():
            report(
                InputError(str(path), line, f"expected 3 tab-separated columns, got {len(cols)}"), on_error
            )
            continue
        types = [figer_type(t) for t in cols[2].split(",") if t.strip()]
        row = _ids(path, line, on_error, entity=cols[0].strip(), **{f"type {t}": t for t in types})
        if row is not None:
            yield row[0], cols[1].strip(), list(row[1:])


def read_type_rows(
    path: Path, fmt: str, on_error: ErrorHandler = None, stats: dict | None = None
) -> Iterator[tuple[str, str]]:
    """(entity, type) rows of a type table in format ``fmt`` (tsv, ntriples, textent)."""
    if fmt == "tsv":
        yield from read_tsv(path, on_error)
    elif fmt == "ntriples":
        yield from read_ntriples(path, on_error, stats)
    elif fmt == "textent":
        for entity, _title, types in read_textent(path, on_error):
            for t in types:
                yield entity, t
    else:
        raise ValueError(f"unknown type-table format {fmt!r}; choose one of: {', '.join(TYPE_FORMATS)}")


def read_figer_map(path: Path, on_error: ErrorHandler = None) -> Iterator[tuple[str, str]]:
    """(Freebase type, FIGER type) rows of FIGER's types.map."""
    for line, content in read_lines(path, on_error):
        if not content.strip() or content.startswith("#"):
            continue
        cols = content.split("\t")
        if len(cols) != 2 or not cols[0].startswith("/") or not cols[1].startswith("/"):
            report(InputError(str(path), line, "expected '/freebase/type<TAB>/figer/type'"), on_error)
            continue
        row = _ids(path, line, on_error, source_type=cols[0].strip(), target_type=cols[1].strip())
        if row is not None:
            yield row


def title_key(title: str) -> str:
    """Join key for names and Wikipedia titles: case-folded, single spaces, no '(disambiguation)'."""
    title = re.sub(r"\s*\([^)]*\)\s*$", "", title)
    return " ".join(title.replace("_", " ").split()).casefold()


def textent_titles(paths: Iterable[Path]) -> dict[str, set[str]]:
    """title_key → FIGER types over the textent tables; titles of several entities get all their types."""
    out: dict[str, set[str]] = {}
    for path in paths:
        for _mid, title, types in read_textent(Path(path)):
            out.setdefault(title_key(title), set()).update(types)
    return out


def textent_names(paths: Iterable[Path]) -> dict[str, str]:
    """Freebase MID → Wikipedia title (names for GREC's unlabelled MIDs)."""
    out: dict[str, str] = {}
    for path in paths:
        for mid, title, _types in read_textent(Path(path)):
            out.setdefault(mid, title)
    return out


def title_type_rows(
    entities: Iterable[tuple[str, str]], titles: dict[str, set[str]]
) -> Iterator[tuple[str, str]]:
    """(entity, type) for entities (id, name) whose name matches a textent title (by title_key)."""
    for entity, name in entities:
        for t in sorted(titles.get(title_key(name), ())):
            yield entity, t
