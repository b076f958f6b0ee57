"""Corpus readers, one module per input format (the protocol is in :mod:`extract.formats.base`).

:func:`reader` makes the reader of a format name with its options, e.g.
``reader("facc1", docs_dir="texts/")``; each module documents its input format.
"""

from __future__ import annotations

from extract.formats.base import CorpusReader, PreparsedReader
from extract.formats.conllu import ConlluReader
from extract.formats.docbin import SpacyReader
from extract.formats.facc1 import FACC1Reader
from extract.formats.fewrel import FewRelReader
from extract.formats.google_re import GoogleREReader
from extract.formats.grec import GRECReader
from extract.formats.jsonl import JsonlReader
from extract.formats.text import TextReader
from extract.formats.trex import TRExReader

# format name -> reader class
FORMATS: dict[str, type[CorpusReader | PreparsedReader]] = {
    "jsonl": JsonlReader,
    "fewrel": FewRelReader,
    "trex": TRExReader,
    "google_re": GoogleREReader,
    "grec": GRECReader,
    "facc1": FACC1Reader,
    "conllu": ConlluReader,
    "text": TextReader,
    "spacy": SpacyReader,
}
# names other tools give these formats: `--format docbin` is refused with "did you mean spacy?"
FORMAT_ALIASES = {
    "docbin": "spacy",
    "spacy-docbin": "spacy",
    "json": "jsonl",
    "ndjson": "jsonl",
    "jsonlines": "jsonl",
    "conll": "conllu",
    "txt": "text",
    "plain": "text",
}
# formats whose files are not text: their checksum is over their bytes (text files: over their content,
# whatever their line endings, extract.batches.store.text_checksum)
BINARY_FORMATS = frozenset({"spacy"})


def reader(fmt: str, **options: object) -> CorpusReader | PreparsedReader:
    """The reader of a format name, made with its options (ValueError listing the formats for an
    unknown one; TypeError naming the options a format does not take)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown corpus format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    try:
        return FORMATS[fmt](**options)
    except TypeError:
        raise ValueError(f"format {fmt!r} takes no options {sorted(options)}") from None
