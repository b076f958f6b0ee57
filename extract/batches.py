"""Transactional, idempotent batch loading of corpora, type tables and type maps into the raw schema.

One input file = one batch (raw.load_batches row, sha256 checksum of the file's bytes):

- the same file (same checksum, kind and format) already loaded → nothing is loaded, the summary
  says so (``skipped``); ``replace=True`` deletes the old batch (and any loaded batch of the same
  kind/format from the same path) and reloads, in the same transaction;
- other content at a path already loaded (same kind and format: the file changed since) is refused
  with a message pointing to ``--replace`` — loading it as a new batch would store its unchanged
  records twice;
- everything of a batch is written in ONE transaction (COPY into temporary tables, then set-based
  inserts); any :class:`InputError` rolls it back — earlier batches stay intact, no 'loading' row
  is left — and a 'failed' row holding the error message is recorded in a separate short
  transaction (no data rows refer to it);
- ``skip_bad=True`` skips bad records instead and counts them (``n_bad_lines``; the first messages
  are kept in the batch's ``options``);
- two loads of the same file at once serialise on a transaction-level advisory lock keyed by the
  checksum (and the path), so the second one sees the first one's batch and skips.

A corpus batch belongs to a named corpus (``corpus_name``; default: the file's stem): the dbt var
``corpora`` builds the graph from some corpora only. A file's content belongs to one corpus: loading it
again under another name is skipped with a message pointing to ``--replace``. :func:`list_batches` and
:func:`remove_batches` (one transaction) manage the loaded batches.

Identifiers never come from user input; values are always bound parameters or COPY data.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psycopg
from psycopg.rows import dict_row

from deppath.records import Document, ExtractionResult
from extract.corpus_rows import Tally, document_rows
from extract.formats import reader
from extract.formats.base import CorpusReader, PreparsedReader
from extract.formats.common import ErrorHandler, check_document, check_id, check_input_file, report
from extract.pipeline import Extraction, extract_documents
from warehouse import server
from warehouse.errors import DatabaseUnavailable, InputError

CHUNK_ROWS = 5000  # rows buffered before a COPY round trip
MAX_KEPT_ERRORS = 20  # bad-line messages kept in load_batches.options with skip_bad
# Corpus names end up in dbt vars and shell commands: plain names only, nothing to quote.
CORPUS_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


@dataclass
class BatchSummary:
    """What one load did. ``skipped``: the file was already loaded (nothing written)."""

    batch_id: int | None
    source_file: str
    source_format: str
    kind: str
    corpus_name: str | None = None  # corpus batches only
    skipped: bool = False
    replaced_batches: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    rejections: dict[str, int] = field(default_factory=dict)
    reader_stats: dict[str, int] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)
    seconds: float = 0.0
    message: str = ""
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase (the Spark loader)

    def to_dict(self) -> dict:
        return asdict(self)


def file_checksum(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _lock_key(text: str) -> int:
    """A signed 64-bit advisory-lock key derived from a string (stable across processes)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


def _load_key(options: dict) -> dict:
    """The options that change what a load writes (not how fast): limit, NER use, reader options."""
    keys = ("limit", "ner_types", "ner_mentions", "reader_options", "type_source")
    return {k: options[k] for k in keys if options.get(k) not in (None, False, {})}


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


def skip_message(
    path: Path,
    fmt: str,
    batch_id: int,
    old_options: dict,
    options: dict,
    old_corpus: str | None = None,
    corpus: str | None = None,
) -> str:
    """Why a file is not loaded again (the same content is already batch `batch_id`)."""
    if old_corpus != corpus:
        return (
            f"{path}: already loaded as batch {batch_id} of corpus {old_corpus!r} (same content); nothing "
            f"loaded — a file belongs to one corpus: use --replace to load it as corpus {corpus!r} instead"
        )
    if _load_key(old_options) != _load_key(options):
        return (
            f"{path}: already loaded as batch {batch_id} with other options {_load_key(old_options)}; "
            f"nothing loaded — use --replace to reload with {_load_key(options)}"
        )
    return (
        f"{path}: already loaded as batch {batch_id} (same content, format {fmt}); "
        "nothing loaded — use --replace to reload it"
    )


def batch_counts(counts: dict[str, int]) -> tuple[int, ...]:
    """load_batches' n_documents, n_sentences, n_mentions, n_instances, n_rows, n_bad_lines."""
    keys = ("documents", "sentences", "mentions", "instances", "rows", "bad_lines")
    return tuple(counts.get(key, 0) for key in keys)


def finish_summary(summary: BatchSummary, path: Path, counts: dict[str, int], options: dict) -> dict:
    """Fill a loaded batch's summary (counts, message); returns the options load_batches records."""
    summary.counts = counts
    options = dict(options)
    if summary.reader_stats:
        options["reader_stats"] = summary.reader_stats
    if summary.bad_lines:
        options["bad_lines"] = summary.bad_lines
    verb = "replaced and loaded" if summary.replaced_batches else "loaded"
    shown = ", ".join(f"{k} {v:,}" for k, v in counts.items() if v)
    summary.message = f"{path}: {verb} as batch {summary.batch_id} ({shown or 'no rows'})"
    if summary.reader_stats:  # e.g. mentions not found by the Google-RE matching rule
        summary.message += "; reader: " + ", ".join(
            f"{k} {v:,}" for k, v in sorted(summary.reader_stats.items())
        )
    return options


class _BadLines:
    """skip_bad handler: counts bad records, keeps the first messages."""

    def __init__(self) -> None:
        self.count = 0
        self.messages: list[str] = []

    def __call__(self, error: InputError) -> None:
        self.count += 1
        if len(self.messages) < MAX_KEPT_ERRORS:
            self.messages.append(str(error))


class _Batch:
    """The lifecycle shared by every kind of load: lock, skip/replace, insert, commit or record failure."""

    def __init__(
        self,
        path: Path,
        fmt: str,
        kind: str,
        url: str | None,
        replace: bool,
        options: dict,
        *,
        checksum: str | None = None,
        by_path: bool = True,
        corpus: str | None = None,
    ):
        self.path = path
        self.corpus = corpus
        self.fmt = fmt
        self.kind = kind
        self.url = url or server.database_url()
        self.replace = replace
        self.options = options
        # checksum: of the file's bytes, unless the caller's covers more (benchmarks: options, index).
        self.checksum = checksum or file_checksum(path)
        self.source = str(path.resolve())
        self.summary = BatchSummary(None, self.source, fmt, kind, corpus_name=corpus)
        # supersede: a derived file whose new content replaces the old batch from the same path.
        self.supersede = False
        # by_path: a path holds one version of one file (refuse other content there unless replacing).
        # Benchmarks turn it off: one file loads as several dataset/split batches; their loader refuses
        # overlapping item ids instead.
        self.by_path = by_path

    def run(self, write: Callable[[psycopg.Connection, int], dict[str, int]]) -> BatchSummary:
        started = time.perf_counter()
        server.ensure_schema(self.url)
        try:
            with server.connect(self.url) as conn:
                with conn.transaction():
                    if self._begin(conn):
                        counts = write(conn, self.summary.batch_id)
                        self._finish(conn, counts)
        except InputError as exc:
            self._record_failure(str(exc))
            raise
        except psycopg.OperationalError as exc:  # the server went away mid-load: the batch rolled back
            raise DatabaseUnavailable(
                f"lost the database at {server.redact(self.url)} while loading {self.path} (nothing of "
                f"it was kept): {' '.join(str(exc).split())}"
            ) from None
        self.summary.seconds = round(time.perf_counter() - started, 3)
        return self.summary

    def _begin(self, conn: psycopg.Connection) -> bool:
        # Lock in a fixed order (sorted keys): two loaders never wait on each other crosswise.
        for key in sorted(
            {_lock_key(f"sherliic-load:{self.checksum}"), _lock_key(f"sherliic-load:{self.source}")}
        ):
            conn.execute("select pg_advisory_xact_lock(%s)", (key,))
        existing = conn.execute(
            "select batch_id, options, corpus_name from raw.load_batches where kind = %s "
            "and source_format = %s and status = 'loaded' and (checksum = %s or (%s and source_file = %s)) "
            "order by batch_id",
            (self.kind, self.fmt, self.checksum, self.replace and self.by_path, self.source),
        ).fetchall()
        if self.supersede and not existing:
            existing = conn.execute(
                "select batch_id, options, corpus_name from raw.load_batches where kind = %s "
                "and source_format = %s and status = 'loaded' and source_file = %s order by batch_id",
                (self.kind, self.fmt, self.source),
            ).fetchall()
            self.replace = bool(existing)
        if not existing and not self.replace and not self.supersede and self.by_path:
            changed = conn.execute(
                "select batch_id from raw.load_batches where kind = %s and source_format = %s "
                "and status = 'loaded' and source_file = %s order by batch_id",
                (self.kind, self.fmt, self.source),
            ).fetchone()
            if changed is not None:
                # Loading it as a new batch would store its unchanged records twice.
                raise InputError(
                    str(self.path),
                    None,
                    f"a different version of this file is already loaded as batch {changed[0]} (its "
                    "content changed since); nothing loaded — use --replace to load the new content "
                    "in its place",
                )
        if existing and not self.replace:
            batch_id, old_options, old_corpus = existing[0]
            self.summary.batch_id = batch_id
            self.summary.corpus_name = old_corpus
            self.summary.skipped = True
            self.summary.message = skip_message(
                self.path, self.fmt, batch_id, old_options, self.options, old_corpus, self.corpus
            )
            return False
        if existing:
            old = [row[0] for row in existing]
            conn.execute("delete from raw.load_batches where batch_id = any(%s)", (old,))
            self.summary.replaced_batches = old
        self.summary.batch_id = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status, options, "
            "corpus_name) values (%s, %s, %s, %s, 'loading', %s, %s) returning batch_id",
            (self.source, self.fmt, self.kind, self.checksum, json.dumps(self.options), self.corpus),
        ).fetchone()[0]
        return True

    def _finish(self, conn: psycopg.Connection, counts: dict[str, int]) -> None:
        options = finish_summary(self.summary, self.path, counts, self.options)
        conn.execute(
            # clock_timestamp(): now() is the transaction's start, i.e. started_at
            "update raw.load_batches set status = 'loaded', finished_at = clock_timestamp(), "
            "n_documents = %s, n_sentences = %s, n_mentions = %s, n_instances = %s, n_rows = %s, "
            "n_bad_lines = %s, options = %s "
            "where batch_id = %s",
            (*batch_counts(counts), json.dumps(options), self.summary.batch_id),
        )

    def _record_failure(self, message: str) -> None:
        """A 'failed' row without data, in its own short transaction (the batch itself rolled back)."""
        try:
            with server.connect(self.url, autocommit=True) as conn:
                conn.execute(
                    "insert into raw.load_batches (source_file, source_format, kind, checksum, status, "
                    "options, corpus_name, finished_at) "
                    "values (%s, %s, %s, %s, 'failed', %s, %s, clock_timestamp())",
                    (
                        self.source,
                        self.fmt,
                        self.kind,
                        self.checksum,
                        json.dumps({**self.options, "error": message}),
                        self.corpus,
                    ),
                )
        except (psycopg.Error, DatabaseUnavailable):
            pass  # recording the failure must never hide the InputError itself


# -- corpora ------------------------------------------------------------------------------------------
class _Copier:
    """Buffers rows and COPYs them into a table in chunks (one COPY at a time per connection)."""

    def __init__(self, conn: psycopg.Connection, statement: str):
        self.conn, self.statement, self.rows, self.total = conn, statement, [], 0

    def add(self, row: tuple) -> None:
        self.rows.append(row)
        if len(self.rows) >= CHUNK_ROWS:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        with self.conn.cursor() as cur, cur.copy(self.statement) as copy:
            for row in self.rows:
                copy.write_row(row)
        self.total += len(self.rows)
        self.rows = []


def write_corpus(
    conn: psycopg.Connection,
    batch_id: int,
    results: Iterable[tuple[Document, ExtractionResult]],
    bad: _BadLines | None,
    progress: Callable[[int], None] | None,
) -> tuple[dict, dict]:
    conn.execute(
        "create temp table _load_sentences (local_id bigint, document_id text, line_number integer, "
        "sentence_index integer, text text) on commit drop"
    )
    conn.execute(
        "create temp table _load_instances (local_sentence bigint, path text, arg1 text, arg2 text, "
        "subject_side smallint) on commit drop"
    )
    sentences = _Copier(conn, "copy _load_sentences from stdin")
    instances = _Copier(conn, "copy _load_instances from stdin")
    tally = Tally()
    local_id = 0  # sentences of the batch, numbered from 1 in load order
    for document, result in results:
        tally.add(document, result)
        sentence_rows, instance_rows = document_rows(document, result)
        for position, row in enumerate(sentence_rows):
            sentences.add((local_id + 1 + position, *row))
        for position, *instance in instance_rows:
            instances.add((local_id + 1 + position, *instance))
        local_id += len(sentence_rows)
        if progress is not None:
            progress(1)
    sentences.flush()
    instances.flush()
    # Identity ids are drawn for the whole batch, then rows inserted with explicit ids so the
    # instances can point at their sentences (COPY cannot write GENERATED ALWAYS columns).
    conn.execute(
        "create temp table _load_sentence_ids on commit drop as select local_id, "
        "nextval(pg_get_serial_sequence('raw.sentences', 'sentence_id')) as sentence_id from _load_sentences"
    )
    conn.execute(
        "insert into raw.sentences (sentence_id, batch_id, document_id, line_number, sentence_index, text) "
        "overriding system value select m.sentence_id, %s, s.document_id, s.line_number, "
        "s.sentence_index, s.text "
        "from _load_sentences s join _load_sentence_ids m using (local_id)",
        (batch_id,),
    )
    conn.execute(
        "insert into raw.relation_instances (batch_id, sentence_id, path, arg1_entity_id, arg2_entity_id, "
        "subject_side) select %s, m.sentence_id, i.path, i.arg1, i.arg2, i.subject_side "
        "from _load_instances i join _load_sentence_ids m on m.local_id = i.local_sentence",
        (batch_id,),
    )
    with (
        conn.cursor() as cur,
        cur.copy("copy raw.entities (batch_id, entity_id, entity_name) from stdin") as copy,
    ):
        for entity, name in tally.entity_rows():
            copy.write_row((batch_id, entity, name))
    type_rows = tally.type_rows()
    with (
        conn.cursor() as cur,
        cur.copy("copy raw.entity_types (batch_id, entity_id, type_name, type_source) from stdin") as copy,
    ):
        for entity, type_name, source in type_rows:
            copy.write_row((batch_id, entity, type_name, source))
    rejections = dict(sorted(tally.rejections.items()))
    with (
        conn.cursor() as cur,
        cur.copy("copy raw.path_rejections (batch_id, rule, n_paths) from stdin") as copy,
    ):
        for rule, n in rejections.items():
            copy.write_row((batch_id, rule, n))
    counts = {
        "documents": tally.documents,
        "sentences": sentences.total,
        "mentions": tally.mentions,
        "entities": len(tally.names),
        "entity_types": len(type_rows),
        "typed_entities": len({e for e, _, _ in type_rows}),
        "instances": instances.total,
        "rejected": sum(rejections.values()),
        "bad_lines": bad.count if bad else 0,
    }
    return counts, rejections


def corpus_plan(
    path: Path,
    fmt: str,
    reader_options: dict | None,
    *,
    ner_types: bool,
    ner_mentions: bool,
    limit: int | None,
) -> tuple[CorpusReader | PreparsedReader, Extraction | None, dict]:
    """A corpus file's reader, its extraction (None: the reader brings its own parses) and the batch
    options that describe the load (the same for every engine's loader)."""
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
    if isinstance(corpus_reader, PreparsedReader):
        return corpus_reader, None, options
    extraction = Extraction(
        source=str(path),
        alignment=corpus_reader.alignment,
        ner_types=ner_types or corpus_reader.needs_ner,
        ner_mentions=ner_mentions or corpus_reader.needs_ner,
    )
    return corpus_reader, extraction, options


def load_corpus(
    path: str | Path,
    fmt: str,
    url: str | None = None,
    *,
    corpus: str | None = None,
    replace: bool = False,
    skip_bad: bool = False,
    processes: int = 1,
    ner_types: bool = False,
    ner_mentions: bool = False,
    limit: int | None = None,
    reader_options: dict | None = None,
    progress: Callable[[int], None] | None = None,
) -> BatchSummary:
    """Read, parse, extract and load one corpus file as one batch of corpus `corpus` (default: the
    file's stem; see the module doc).

    ner_types: type linked mentions with spaCy NER labels (majority per entity, type_source ``ner``);
    ner_mentions: also add NER entities not covered by a linked mention (id = normalised name).
    limit: read at most this many documents (the batch options record it). progress: called with 1
    per document done (the CLI's progress bar).
    """
    path = check_input_file(Path(path))
    corpus = corpus_name(path, corpus)
    corpus_reader, extraction, options = corpus_plan(
        path, fmt, reader_options, ner_types=ner_types, ner_mentions=ner_mentions, limit=limit
    )
    options = {"processes": processes, "skip_bad": skip_bad, **options}
    batch = _Batch(path, fmt, "corpus", url, replace, options, corpus=corpus)
    bad = _BadLines() if skip_bad else None
    stats: Counter = Counter()

    def write(conn: psycopg.Connection, batch_id: int) -> dict[str, int]:
        if isinstance(corpus_reader, PreparsedReader):
            results: Iterable = checked_documents(corpus_reader.read_extracted(path, on_error=bad), path, bad)
        else:
            docs: Iterable[Document] = corpus_reader.read(path, on_error=bad, stats=stats)
            docs = checked_documents(docs, path, bad)
            if limit is not None:
                docs = _take(docs, limit)
            results = extract_documents(docs, extraction, processes=processes, on_error=bad, stats=stats)
            if limit is not None:
                results = _take(results, limit)
        counts, rejections = write_corpus(conn, batch_id, results, bad, progress)
        if counts["documents"] == 0:
            raise InputError(str(path), None, "no documents in the file")
        if isinstance(corpus_reader, PreparsedReader):
            stats["sentences_parsed"] += counts["documents"]  # one sentence per CoNLL-U block
        batch.summary.rejections = rejections
        batch.summary.reader_stats = dict(stats)
        batch.summary.bad_lines = bad.messages if bad else []
        return counts

    return batch.run(write)


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


def _take(items: Iterable, n: int) -> Iterator:
    for i, item in enumerate(items):
        if i >= n:
            return
        yield item


# -- type tables and maps -------------------------------------------------------------------------------
def _write_rows(conn: psycopg.Connection, statement: str, rows: Iterable[tuple]) -> int:
    seen: set[tuple] = set()
    with conn.cursor() as cur, cur.copy(statement) as copy:
        for row in rows:
            if row in seen:  # the primary keys are sets: duplicates in the file count once
                continue
            seen.add(row)
            copy.write_row(row)
    return len(seen)


def type_table_plan(path: str | Path, fmt: str, type_source: str | None) -> tuple[Path, str]:
    """A type table's checked path and type source (the same for every engine's loader)."""
    from extract import types as type_tables

    if fmt not in type_tables.TYPE_FORMATS:
        raise ValueError(
            f"unknown type-table format {fmt!r}; choose one of: {', '.join(type_tables.TYPE_FORMATS)}"
        )
    path = check_input_file(Path(path))
    return path, check_id(type_source or type_tables.DEFAULT_SOURCE[fmt], "type source", path, None)


def load_types(
    path: str | Path,
    fmt: str,
    url: str | None = None,
    *,
    replace: bool = False,
    skip_bad: bool = False,
    type_source: str | None = None,
) -> BatchSummary:
    """Load an entity-type table (formats in extract.types: tsv, ntriples, textent) as one batch."""
    from extract import types as type_tables

    path, source = type_table_plan(path, fmt, type_source)
    batch = _Batch(path, fmt, "types", url, replace, {"type_source": source, "skip_bad": skip_bad})
    bad = _BadLines() if skip_bad else None
    stats: dict = {}

    def write(conn: psycopg.Connection, batch_id: int) -> dict[str, int]:
        rows = ((batch_id, e, t, source) for e, t in type_tables.read_type_rows(path, fmt, bad, stats))
        n = _write_rows(
            conn, "copy raw.entity_types (batch_id, entity_id, type_name, type_source) from stdin", rows
        )
        if n == 0:
            raise InputError(str(path), None, "no type rows in the file")
        entities = conn.execute(
            "select count(distinct entity_id) from raw.entity_types where batch_id = %s", (batch_id,)
        ).fetchone()[0]
        batch.summary.reader_stats = stats
        batch.summary.bad_lines = bad.messages if bad else []
        return {"rows": n, "typed_entities": entities, "bad_lines": bad.count if bad else 0}

    return batch.run(write)


def load_type_map(
    path: str | Path,
    url: str | None = None,
    *,
    fmt: str = "figer_map",
    replace: bool = False,
    skip_bad: bool = False,
) -> BatchSummary:
    """Load a type map (``figer_map``: Freebase type → FIGER type) into raw.type_mappings."""
    from extract import types as type_tables

    if fmt != "figer_map":
        raise ValueError(f"unknown type-map format {fmt!r}; choose: figer_map")
    path = check_input_file(Path(path))
    batch = _Batch(path, fmt, "type_map", url, replace, {"skip_bad": skip_bad})
    bad = _BadLines() if skip_bad else None

    def write(conn: psycopg.Connection, batch_id: int) -> dict[str, int]:
        rows = ((batch_id, s, t) for s, t in type_tables.read_figer_map(path, bad))
        n = _write_rows(conn, "copy raw.type_mappings (batch_id, source_type, target_type) from stdin", rows)
        if n == 0:
            raise InputError(str(path), None, "no mappings in the file")
        batch.summary.bad_lines = bad.messages if bad else []
        return {"rows": n, "bad_lines": bad.count if bad else 0}

    return batch.run(write)


def load_title_types(
    textent_paths: list[Path],
    url: str | None = None,
    *,
    replace: bool = False,
    entity_pattern: str = r"^Q[0-9]+$",
    out_dir: Path | None = None,
) -> BatchSummary:
    """Type KG-less entities (default: Wikidata QIDs) by joining their names with textent's Wikipedia titles.

    Writes a ``types`` batch of format ``textent_title`` (type_source ``textent_title``) from a derived
    TSV under out/derived whose checksum covers the textent files and the matched rows: rerunning with
    unchanged inputs loads nothing; new matches (more corpora loaded) replace the previous batch.
    """
    from extract import types as type_tables

    url = url or server.database_url()
    server.ensure_schema(url)
    paths = [check_input_file(Path(p)) for p in textent_paths]
    titles = type_tables.textent_titles(paths)
    with server.connect(url) as conn:
        entities = conn.execute(
            "select e.entity_id, min(e.entity_name) from raw.entities e "
            "join raw.load_batches b using (batch_id) "
            "where b.status = 'loaded' and e.entity_id ~ %s group by e.entity_id order by e.entity_id",
            (entity_pattern,),
        ).fetchall()
    rows = sorted(set(type_tables.title_type_rows(entities, titles)))
    # A small manifest file under out/ makes the derived table an ordinary, checksummed input.
    from warehouse.settings import OUT_DIR

    # One manifest per database: runs against different databases never overwrite each other's input.
    dbname = server.connection_parts(url)["dbname"]
    manifest = (out_dir or OUT_DIR / "derived") / f"textent_title_types.{dbname}.tsv"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    header = "# derived from " + ", ".join(f"{p.name}:{file_checksum(p)[:12]}" for p in paths) + "\n"
    manifest.write_text(header + "".join(f"{e}\t{t}\n" for e, t in rows) or header, encoding="utf-8")
    batch = _Batch(
        manifest,
        "textent_title",
        "types",
        url,
        replace,
        {"type_source": "textent_title", "candidates": len(entities)},
    )
    batch.supersede = True

    def write(conn: psycopg.Connection, batch_id: int) -> dict[str, int]:
        n = _write_rows(
            conn,
            "copy raw.entity_types (batch_id, entity_id, type_name, type_source) from stdin",
            ((batch_id, e, t, "textent_title") for e, t in rows),
        )
        return {"rows": n, "typed_entities": len({e for e, _ in rows}), "candidates": len(entities)}

    return batch.run(write)


# -- the loaded batches: list and remove ------------------------------------------------------------
@dataclass
class RemovedBatches:
    """What :func:`remove_batches` deleted: the load_batches rows and the rows per raw table."""

    batches: list[dict] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    not_found: list[str] = field(default_factory=list)  # with missing_ok: the unknown batches/corpora


def list_batches(url: str | None = None, *, corpus: str | None = None, kind: str | None = None) -> list[dict]:
    """Every batch of raw.load_batches (any status), oldest first; optionally of one corpus or kind."""
    url = url or server.database_url()
    server.ensure_schema(url)
    with server.connect(url) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "select batch_id, kind, corpus_name, source_file, source_format, checksum, status, "
            "n_documents, n_sentences, n_instances, n_rows, n_bad_lines, started_at, finished_at, "
            "options ->> 'error' as error, options ->> 'type_source' as type_source "
            "from raw.load_batches "
            "where (%(corpus)s::text is null or corpus_name = %(corpus)s) "
            "and (%(kind)s::text is null or kind = %(kind)s) order by batch_id",
            {"corpus": corpus, "kind": kind},
        )
        return cur.fetchall()


def loaded_corpora(conn: psycopg.Connection) -> list[str]:
    """The names of the corpora with a loaded batch."""
    rows = conn.execute(
        "select distinct corpus_name from raw.load_batches where kind = 'corpus' and status = 'loaded' "
        "order by corpus_name"
    ).fetchall()
    return [row[0] for row in rows]


def batches_not_found(batch_ids: list[int], corpora: list[str], loaded: list[str]) -> InputError:
    """The error of a remove naming batches or corpora that are not there (nothing was removed)."""
    what = " and ".join(
        part
        for part in (
            f"no batch {', '.join(map(str, batch_ids))}" if batch_ids else "",
            f"no corpus {', '.join(map(repr, corpora))}" if corpora else "",
        )
        if part
    )
    return InputError(
        "raw.load_batches",
        None,
        f"{what} (corpora loaded: {', '.join(loaded) or 'none'}; `sherliic-extract batches` lists the "
        "batches); nothing removed",
    )


def remove_batches(
    url: str | None = None,
    *,
    batch_ids: Iterable[int] = (),
    corpora: Iterable[str] = (),
    missing_ok: bool = False,
) -> RemovedBatches:
    """Delete batches (by id, and every batch of the named corpora, any status) with all their rows in
    every raw table, in ONE transaction: an unknown batch id or corpus name removes nothing (an
    InputError naming it), unless ``missing_ok`` (then it is reported in ``not_found``). Removing what is
    already gone with ``missing_ok`` changes nothing. The marts keep the old graph until the next build."""
    batch_ids, corpora = sorted(set(batch_ids)), sorted(set(corpora))
    if not batch_ids and not corpora:
        raise ValueError("name the batches to remove (batch ids or corpus names)")
    url = url or server.database_url()
    server.ensure_schema(url)
    removed = RemovedBatches()
    with server.connect(url) as conn, conn.transaction():
        # The tables holding a batch's rows, from the catalog: a raw table added later is covered too.
        tables = [
            row[0]
            for row in conn.execute(
                "select table_name from information_schema.columns where table_schema = 'raw' "
                "and column_name = 'batch_id' and table_name <> 'load_batches' order by table_name"
            )
        ]
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(
                "select batch_id, kind, corpus_name, source_file, status from raw.load_batches "
                "where batch_id = any(%s) or (kind = 'corpus' and corpus_name = any(%s)) "
                "order by batch_id for update",
                (batch_ids, corpora),
            )
            removed.batches = cur.fetchall()
        ids = [row["batch_id"] for row in removed.batches]
        found_corpora = {row["corpus_name"] for row in removed.batches if row["kind"] == "corpus"}
        missing_ids = [i for i in batch_ids if i not in ids]
        missing_corpora = [name for name in corpora if name not in found_corpora]
        removed.not_found = [f"batch {i}" for i in missing_ids] + [f"corpus {c!r}" for c in missing_corpora]
        if removed.not_found and not missing_ok:
            raise batches_not_found(missing_ids, missing_corpora, loaded_corpora(conn))
        for table in tables:  # names from the catalog, not from user input
            deleted = conn.execute(f"delete from raw.{table} where batch_id = any(%s)", (ids,)).rowcount
            if deleted:
                removed.rows[table] = deleted
        conn.execute("delete from raw.load_batches where batch_id = any(%s)", (ids,))
    return removed
