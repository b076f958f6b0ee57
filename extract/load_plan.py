"""What a corpus load is before an engine writes it, shared by the Postgres and the Spark loader
(:mod:`extract.postgres_load`, :mod:`extract.spark_load`, both behind :mod:`extract.loading`).

A :class:`CorpusPlan` holds the checked input file, the corpus it is loaded into, its reader and
extraction, the batch options that describe the load, and the ``skip_bad`` counter
(:class:`BadLines`); :meth:`CorpusPlan.items` is the one way both engines read the file's documents
(checked like any record, in canonical form, each document id once within the corpus, at most ``limit``
of them), :meth:`CorpusPlan.write_documents` records their ids (raw.documents) and
:meth:`CorpusPlan.report` fills the batch summary.

Loaded once, whatever the shape: ids are compared in Unicode NFC (one entity written in NFC and NFD is
one entity), a mention listed twice in a document counts once (reader stat ``repeated_mentions``), and a
document id already used in the file or in another loaded batch of the corpus is an error naming both
places (``on_duplicate="error"``) or skipped (``"skip"``, reader stat ``duplicate_documents``). The
readers drop a record repeated verbatim (``repeated_records``) before that.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from deppath.parsing import MODEL, pipeline_label
from deppath.records import Document, Mention
from extract.batches.store import MAX_KEPT_ERRORS, BatchSummary, BatchWriter
from extract.formats import reader
from extract.formats.base import CorpusReader, PreparsedReader
from extract.formats.docbin import SpacyReader
from extract.formats.documents import check_document
from extract.formats.sniff import check_format
from extract.pipeline import Extraction
from files.reading import ErrorHandler, check_input_file, nfc, report
from warehouse.errors import ConfigurationError, InputError

# Corpus names end up in dbt vars and shell commands: plain names only, nothing to quote.
CORPUS_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
ON_DUPLICATE = ("error", "skip")  # what a document id already used in the corpus does
DOCUMENT_COLUMNS = ("document_id", "line_number")  # raw.documents


MAX_KEPT_LINES = 1000  # line numbers of skipped records kept in load_batches.options (bad_line_numbers)


class BadLines:
    """The skip_bad handler: counts bad records, keeps the first messages and the line numbers of the
    first MAX_KEPT_LINES (what a user looks up in the file; a problem with the whole file has none)."""

    def __init__(self) -> None:
        self.count = 0
        self.messages: list[str] = []
        self.lines: list[int] = []

    def __call__(self, error: InputError) -> None:
        self.count += 1
        if len(self.messages) < MAX_KEPT_ERRORS:
            self.messages.append(str(error))
        if error.line is not None and len(self.lines) < MAX_KEPT_LINES:
            self.lines.append(error.line)

    def line_numbers(self) -> list[int]:
        """The kept line numbers, ascending, each once (a line may hold several bad records)."""
        return sorted(set(self.lines))


def folded_lines(numbers: Iterable[int]) -> str:
    """Line numbers as ranges, ``1, 4-6, 9`` (a summary line stays short for a run of bad lines)."""
    ranges: list[list[int]] = []
    for number in sorted(set(numbers)):
        if ranges and number == ranges[-1][1] + 1:
            ranges[-1][1] = number
        else:
            ranges.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


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
    # None: the reader brings its own parses (CoNLL-U; a DocBin whose documents are parsed, which items()
    # finds out when it starts reading)
    extraction: Extraction | None
    options: dict  # the batch options that describe the load (each engine adds its own)
    limit: int | None
    bad: BadLines | None
    on_duplicate: str = "error"
    stats: Counter = field(default_factory=Counter)  # reader events and sentences parsed
    ids: DocumentIds | None = None  # the documents read so far (made by items())

    def items(self, writer: BatchWriter) -> Iterator:
        """The file's documents (with a preparsed reader: (document, extraction result) pairs), in file
        order, each checked like any record and in canonical form, each id once within the corpus (the
        corpus's loaded documents through ``writer``), at most ``limit`` of them. A file plainly in
        another format than the plan's is refused first, naming the format it looks like."""
        check_format(self.path, self.fmt)
        if isinstance(self.reader, SpacyReader) and not self.options["ner_mentions"]:
            self.reader.require_linked_entities(self.path)  # else its documents would have no mention
        if isinstance(self.reader, PreparsedReader) and (
            self.extraction is None or self.reader.brings_parses(self.path)
        ):
            self.extraction = None
            items: Iterable = self.reader.read_extracted(
                self.path,
                on_error=self.bad,
                stats=self.stats,
                ner_types=self.options["ner_types"],
                ner_mentions=self.options["ner_mentions"],
            )
        else:
            items = self.reader.read(self.path, on_error=self.bad, stats=self.stats)
        self.ids = DocumentIds(self.path, self.corpus, self.on_duplicate, writer, self.stats)
        items = checked_documents(items, self.path, self.bad, self.ids, self.stats)
        return items if self.limit is None else take(items, self.limit)

    def write_documents(self, writer: BatchWriter) -> int:
        """raw.documents of the batch: every document id read (once :meth:`items` is consumed)."""
        rows = self.ids.lines.items() if self.ids is not None else ()
        return writer.write_rows("documents", DOCUMENT_COLUMNS, rows)

    def report(self, summary: BatchSummary, documents: int, rejections: dict[str, int]) -> None:
        """Fill the batch summary once the rows are written; a file without documents fails the load."""
        if documents == 0:
            raise InputError(str(self.path), None, "no documents in the file")
        summary.rejections = rejections
        summary.reader_stats = dict(self.stats)
        summary.bad_lines = self.bad.messages if self.bad else []
        summary.bad_line_numbers = self.bad.line_numbers() if self.bad else []
        summary.recorded["parser"] = self.parser()

    def parser(self) -> str:
        """Which parser made the paths: the spaCy pipeline's package and version, or the file's own parses
        (CoNLL-U, a parsed DocBin; known once :meth:`items` started reading)."""
        if self.extraction is None:
            return f"the file's own parses ({self.fmt})"
        return pipeline_label(self.extraction.nlp())


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
    on_duplicate: str = "error",
    alignment: str | None = None,
    spacy_model: str | None = None,
) -> CorpusPlan:
    """A corpus file's plan: the file checked, its corpus name, its reader (ValueError for an unknown
    format or option) and extraction, and the batch options that describe the load.

    alignment: what mention offsets that cut through a token become (default: the format's own,
    :data:`deppath.parsing.ALIGNMENTS`); spacy_model: the spaCy pipeline that parses (default
    :data:`deppath.parsing.MODEL`; checked here, ConfigurationError naming what it lacks). Both are
    recorded in the batch options when given, and refused for a format spaCy never parses (CoNLL-U)."""
    if on_duplicate not in ON_DUPLICATE:
        raise ValueError(f"on_duplicate must be one of {', '.join(ON_DUPLICATE)}, not {on_duplicate!r}")
    path = check_input_file(Path(path))
    corpus = corpus_name(path, corpus)
    reader_options = {k: v for k, v in (reader_options or {}).items() if v is not None}
    corpus_reader = reader(fmt, **reader_options)
    options: dict = {"ner_types": ner_types, "ner_mentions": ner_mentions}
    if limit is not None:
        options["limit"] = limit
    if on_duplicate != "error":
        options["on_duplicate"] = on_duplicate
    if reader_options:
        options["reader_options"] = {
            k: (v if isinstance(v, (str, int, float, bool)) else f"<{len(v)} entries>")
            for k, v in reader_options.items()
        }
    if spacy_model == MODEL:
        spacy_model = None  # the default, recorded as such (a load with it is the same load)
    given = {"alignment": alignment, "spacy_model": spacy_model}
    extraction = None
    if isinstance(corpus_reader, CorpusReader):  # a DocBin may still bring its parses (items() decides)
        extraction = Extraction(
            source=str(path),
            alignment=alignment or corpus_reader.alignment,
            ner_types=ner_types or corpus_reader.needs_ner,
            ner_mentions=ner_mentions or corpus_reader.needs_ner,
            spacy_model=spacy_model or MODEL,
        )
        if spacy_model is not None:
            extraction.nlp()  # a pipeline that is not installed or cannot parse: refused before the load
    elif any(v is not None for v in given.values()):
        flags = " and ".join(f"--{k.replace('_', '-')}" for k, v in given.items() if v is not None)
        raise ConfigurationError(
            f"{flags}: format {fmt} brings its own parses and token spans; spaCy does not run"
        )
    options.update({k: v for k, v in given.items() if v is not None})
    return CorpusPlan(
        path, fmt, corpus, corpus_reader, extraction, options, limit, bad_lines(skip_bad), on_duplicate
    )


class DocumentIds:
    """The document ids of a corpus file being read (``lines``: id → line), each once within the corpus:
    an id seen earlier in the file or loaded in another batch of the corpus is an InputError naming both
    places, or (``on_duplicate="skip"``) the later document is skipped and counted."""

    def __init__(self, path: Path, corpus: str, on_duplicate: str, writer: BatchWriter, stats: Counter):
        self.path, self.corpus, self.on_duplicate = path, corpus, on_duplicate
        self.writer, self.stats = writer, stats
        self.lines: dict[str, int] = {}
        self.loaded = writer.corpus_document_ids(corpus)

    def admit(self, document: Document) -> bool:
        """True for a new id (recorded); False for a duplicate to skip; InputError for one to refuse."""
        document_id = document.document_id
        if document_id in self.lines:
            where = f"line {self.lines[document_id]}"
        elif document_id in self.loaded:
            where = self.writer.document_origin(self.corpus, document_id)
        else:
            self.lines[document_id] = document.line_number
            return True
        if self.on_duplicate == "skip":
            self.stats["duplicate_documents"] += 1
            return False
        raise InputError(
            str(self.path),
            document.line_number,
            f"document id {document_id!r} is already used by the document at {where} of corpus "
            f"{self.corpus!r} (document ids are unique within a corpus; --on-duplicate skip keeps the "
            "first)",
        )


def canonical_document(document: Document, stats: Counter) -> Document:
    """The document with its ids in NFC (the form every id is compared in) and each mention once (the
    same span of the same entity listed twice would double its relation instances)."""
    mentions: list[Mention] = []
    seen: set[tuple[int, int, str]] = set()
    for mention in document.mentions:
        entity_id = nfc(mention.entity_id)
        key = (mention.start, mention.end, entity_id)
        if key in seen:
            stats["repeated_mentions"] += 1
            continue
        seen.add(key)
        types = tuple(nfc(t) for t in mention.types)
        if entity_id != mention.entity_id or types != mention.types:
            mention = replace(mention, entity_id=entity_id, types=types)
        mentions.append(mention)
    document_id, type_source = nfc(document.document_id), nfc(document.type_source)
    if (document_id, type_source, tuple(mentions)) == (
        document.document_id,
        document.type_source,
        document.mentions,
    ):
        return document
    return replace(document, document_id=document_id, type_source=type_source, mentions=tuple(mentions))


def checked_documents(
    items: Iterable,
    path: Path,
    on_error: ErrorHandler,
    ids: DocumentIds | None = None,
    stats: Counter | None = None,
) -> Iterator:
    """The reader's documents (or (document, paths) pairs) that pass :func:`check_document`, in
    canonical form (:func:`canonical_document`), each id once (``ids``); a bad one is raised or handed to
    the skip_bad counter like any bad record."""
    stats = stats if stats is not None else Counter()
    for item in items:
        document = item[0] if isinstance(item, tuple) else item
        try:
            check_document(document, path)
            document = canonical_document(document, stats)
            if ids is not None and not ids.admit(document):
                continue
        except InputError as exc:
            report(exc, on_error)
            continue
        yield (document, *item[1:]) if isinstance(item, tuple) else document


def take(items: Iterable, n: int) -> Iterator:
    """The first `n` items (never reads the one after them: a reader counts what it reads)."""
    if n <= 0:
        return
    for i, item in enumerate(items, start=1):
        yield item
        if i >= n:
            return
