"""Corpus readers, one module per input format (the protocol is in :mod:`extract.formats.base`).

:func:`reader` makes the reader of a format name with its options, e.g.
``reader("facc1", docs_dir="texts/")``; each module documents its input format.
"""

from __future__ import annotations

import importlib

from extract.formats.base import CorpusReader, PreparsedReader

# format name -> (module, reader class)
FORMATS: dict[str, tuple[str, str]] = {
    "jsonl": ("extract.formats.jsonl", "JsonlReader"),
    "fewrel": ("extract.formats.fewrel", "FewRelReader"),
    "trex": ("extract.formats.trex", "TRExReader"),
    "google_re": ("extract.formats.google_re", "GoogleREReader"),
    "grec": ("extract.formats.grec", "GRECReader"),
    "facc1": ("extract.formats.facc1", "FACC1Reader"),
    "conllu": ("extract.formats.conllu", "ConlluReader"),
    "text": ("extract.formats.text", "TextReader"),
}


def reader(fmt: str, **options: object) -> CorpusReader | PreparsedReader:
    """The reader of a format name, made with its options (ValueError listing the formats for an
    unknown one; TypeError naming the options a format does not take)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown corpus format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    module, cls = FORMATS[fmt]
    reader_class = getattr(importlib.import_module(module), cls)
    try:
        return reader_class(**options)
    except TypeError:
        raise ValueError(f"format {fmt!r} takes no options {sorted(options)}") from None
