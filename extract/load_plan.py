"""What a corpus load is before an engine writes it, shared by the Postgres and the Spark loader
(:mod:`extract.postgres_load`, :mod:`extract.spark_load`, both behind :mod:`extract.loading`).

A :class:`CorpusPlan` holds the checked input file, the corpus it is loaded into, its reader and
extraction, the batch options that describe the load, and the ``skip_bad`` counter
(:class:`BadLines`); :meth:`CorpusPlan.items` is the one way both engines read the file's documents
(checked like any record, at most ``limit`` of them) and :meth:`CorpusPlan.report` the one way they
fill the batch summary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from extract.formats import reader
from extract.formats.base import CorpusReader, PreparsedReader
from extract.formats.common import ErrorHandler, check_document, check_input_file, report
from extract.pipeline import Extraction
from warehouse.batch_store import MAX_KEPT_ERRORS, BatchSummary
from warehouse.errors import InputError

# Corpus names end up in dbt vars and shell commands: plain names only, nothing to quote.
CORPUS_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


class BadLines:
    """The skip_bad handler: counts bad records, keeps the first messages."""

    def __init__(self) -> None:
        self.count = 0
        self.messages: list[str] = []

    def __call__(self, error: InputError) -> None:
        self.count += 1
        if len(self.messages) < MAX_KEPT_ERRORS:
            self.messages.append(str(error))


def bad_lines(skip_bad: bool) -> BadLines | None:
    """The error handler of a load: a counter with ``skip_bad``, else None (the first bad record fails it)."""
    return BadLines() if skip_bad else None


def corpus_name(path: Path, name: str | None) -> str:
    """The corpus a corpus file is loaded into: `name`, default the file's stem (news.jsonl → news)."""
    chosen = path.stem if name is None else name
    if not CORPUS_NAME.fullmatch(chosen):
        given = "--corpus" if name is not None else "the corpus name taken from the file name"
        raise InputError(
            str(path),
            None,
            f"{given} {chosen!r} is not a corpus name: use letters, digits, '_', '.' and '-' (starting "
            "with a letter or digit, at most 100 characters)"
            + ("; name the corpus with --corpus NAME" if name is None else ""),
        )
    return chosen


@dataclass
class CorpusPlan:
    """One corpus file's load, the same for every engine (made by :func:`plan_corpus`)."""

    path: Path
    fmt: str
    corpus: str
    reader: CorpusReader | PreparsedReader
    extraction: Extraction | None  # None: the reader brings its own parses (CoNLL-U)
    options: dict  # the batch options that describe the load (each engine adds its own)
    limit: int | None
    bad: BadLines | None
    stats: Counter = field(default_factory=Counter)  # reader events and sentences parsed

    def items(self) -> Iterator:
        """The file's documents (with a preparsed reader: (document, extraction result) pairs), in file
        order, each checked like any record, at most ``limit`` of them."""
        if self.extraction is None:
            items: Iterable = self.reader.read_extracted(self.path, on_error=self.bad)
        else:
            items = self.reader.read(self.path, on_error=self.bad, stats=self.stats)
        items = checked_documents(items, self.path, self.bad)
        return items if self.limit is None else take(items, self.limit)

    def report(self, summary: BatchSummary, documents: int, rejections: dict[str, int]) -> None:
        """Fill the batch summary once the rows are written; a file without documents fails the load."""
        if documents == 0:
            raise InputError(str(self.path), None, "no documents in the file")
        summary.rejections = rejections
        summary.reader_stats = dict(self.stats)
        summary.bad_lines = self.bad.messages if self.bad else []


def plan_corpus(
    path: str | Path,
    fmt: str,
    *,
    corpus: str | None,
    reader_options: dict | None,
    ner_types: bool,
    ner_mentions: bool,
    limit: int | None,
    skip_bad: bool,
) -> CorpusPlan:
    """A corpus file's plan: the file checked, its corpus name, its reader (ValueError for an unknown
    format or option) and extraction, and the batch options that describe the load."""
    path = check_input_file(Path(path))
    corpus = corpus_name(path, corpus)
    reader_options = {k: v for k, v in (reader_options or {}).items() if v is not None}
    corpus_reader = reader(fmt, **reader_options)
    options: dict = {"ner_types": ner_types, "ner_mentions": ner_mentions}
    if limit is not None:
        options["limit"] = limit
    if reader_options:
        options["reader_options"] = {
            k: (v if isinstance(v, (str, int, float, bool)) else f"<{len(v)} entries>")
            for k, v in reader_options.items()
        }
    extraction = None
    if not isinstance(corpus_reader, PreparsedReader):
        extraction = Extraction(
            source=str(path),
            alignment=corpus_reader.alignment,
            ner_types=ner_types or corpus_reader.needs_ner,
            ner_mentions=ner_mentions or corpus_reader.needs_ner,
        )
    return CorpusPlan(path, fmt, corpus, corpus_reader, extraction, options, limit, bad_lines(skip_bad))


def checked_documents(items: Iterable, path: Path, on_error: ErrorHandler) -> Iterator:
    """The reader's documents (or (document, paths) pairs) that pass :func:`check_document`; a bad one
    is raised or handed to the skip_bad counter like any bad record."""
    for item in items:
        document = item[0] if isinstance(item, tuple) else item
        try:
            check_document(document, path)
        except InputError as exc:
            report(exc, on_error)
            continue
        yield item


def take(items: Iterable, n: int) -> Iterator:
    """The first `n` items (stops reading after them)."""
    for i, item in enumerate(items):
        if i >= n:
            return
        yield item
