"""Corpus readers, one module per input format; each yields extract.records.Document objects.

Every reader is ``read(path, *, on_error=None, **options) -> Iterator[Document]`` with 1-based line
numbers; bad input raises ``InputError(file, line, problem)`` unless ``on_error`` (the loader's
skip_bad counter) takes it. Module attributes the loader reads:
``ALIGNMENT`` ("strict": mention offsets must fall on token boundaries, else an error; "expand":
widen to whole tokens — for mentions found by string matching), ``NEEDS_NER`` (mentions come from
spaCy NER), ``PREPARSED`` (the reader brings its own parses: ``read_extracted``).
"""

from __future__ import annotations

import importlib
from types import ModuleType

FORMATS: dict[str, str] = {
    "jsonl": "extract.formats.jsonl",
    "fewrel": "extract.formats.fewrel",
    "trex": "extract.formats.trex",
    "google_re": "extract.formats.google_re",
    "grec": "extract.formats.grec",
    "facc1": "extract.formats.facc1",
    "conllu": "extract.formats.conllu",
    "text": "extract.formats.text",
}
# Mentions found by string matching or given on another tokenisation are widened to whole tokens.
_EXPAND = {"fewrel", "trex", "google_re", "grec", "facc1"}


def reader(fmt: str) -> ModuleType:
    """The reader module of a format name (ValueError listing the formats for an unknown one)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown corpus format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    return importlib.import_module(FORMATS[fmt])


def alignment(fmt: str) -> str:
    return "expand" if fmt in _EXPAND else "strict"
