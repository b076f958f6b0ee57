"""The one batch store: the lifecycle of ``raw.load_batches`` on either engine, written once.

Every load of the project (corpora, type tables, type maps, benchmark files, synthetic graphs) is one
batch: a ``raw.load_batches`` row plus the rows it owns in other raw tables (their ``batch_id``).

    claim (by content hash) -> loading -> loaded | failed;   list;   remove

- A :class:`BatchClaim` says what is loaded: source, format, kind, content checksum, options, corpus.
  The same content (kind + format + checksum) already loaded -> nothing is written, the summary says
  ``skipped``; ``replace`` deletes the old batch (and, with ``by_path``, any batch of the same kind and
  format from the same source) and loads again; other content at a source already loaded is refused
  unless replacing (loading it as a new batch would store its unchanged records twice).
- The loader's ``write(writer)`` writes the rows through a :class:`BatchWriter` and returns counts;
  an exception anywhere rolls the batch back (nothing half-loaded) and a ``failed`` row with the message
  is recorded apart (it owns no rows).
- Postgres (:class:`PostgresBatchStore`): one transaction per batch; two loads of the same content or
  source serialise on transaction-level advisory locks, so the second sees the first's batch and skips.
- Spark (:class:`SparkBatchStore`): rows are written into the batch's partitions while its row says
  ``loading`` (dbt reads ``loaded`` batches only); one rewrite of the small load_batches table publishes
  it. A crashed load's ``loading`` row is turned into ``failed`` (its partitions dropped) by the next
  load. The embedded Derby metastore admits one process at a time.

Nothing else writes ``raw.load_batches``. Identifiers never come from user input; values are bound
parameters or COPY data.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path

import psycopg
from psycopg.rows import dict_row

from warehouse.errors import DatabaseUnavailable, InputError
from warehouse.spark_raw import apply_spark_schema
from warehouse.target import Target

MAX_KEPT_ERRORS = 20  # bad-record messages kept in load_batches.options with skip_bad
SPARK_CHUNK_ROWS = 200_000  # rows per DataFrame sent from the driver
COUNT_COLUMNS = ("n_documents", "n_sentences", "n_mentions", "n_instances", "n_rows", "n_bad_lines")
COUNT_KEYS = ("documents", "sentences", "mentions", "instances", "rows", "bad_lines")
# the Spark raw tables holding a batch's rows, per kind of batch (each partitioned by batch_id)
SPARK_BATCH_TABLES = {
    "corpus": ("sentences", "relation_instances", "entities", "entity_types", "path_rejections"),
    "types": ("entity_types",),
    "type_map": ("type_mappings",),
}
SPARK_BATCH_COLUMNS = (
    "batch_id source_file source_format kind checksum status n_documents n_sentences n_mentions n_instances "
    "n_rows n_bad_lines options started_at finished_at corpus_name"
).split()
# the options that change what a load writes (not how fast): compared when the same content comes again
LOAD_KEY_OPTIONS = ("limit", "ner_types", "ner_mentions", "reader_options", "type_source")


# -- what a batch is and what its load did ---------------------------------------------------------------
def file_checksum(path: Path, extra: bytes = b"") -> str:
    """sha256 of a file's bytes (and of `extra`, e.g. options that change what the file loads as)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    digest.update(extra)
    return digest.hexdigest()


@dataclass(frozen=True)
class BatchClaim:
    """One batch to load: where it comes from, what it holds, and how a load treats what is there."""

    path: Path | str  # the input as the user named it (messages); a Path is stored resolved
    fmt: str
    kind: str  # corpus | types | type_map | benchmark
    checksum: str
    options: dict = field(default_factory=dict)
    corpus: str | None = None  # corpus batches only
    replace: bool = False
    # by_path: a source holds one version of one file (other content there is refused unless replacing).
    # Benchmark files turn it off: one file loads as several dataset/split batches.
    by_path: bool = True
    # supersede: a derived file whose new content replaces the old batch from the same source
    supersede: bool = False

    @property
    def source(self) -> str:
        return str(Path(self.path).resolve()) if isinstance(self.path, Path) else self.path


@dataclass
class BatchSummary:
    """What one load did. ``skipped``: the content was already loaded (nothing written)."""

    batch_id: int | None
    source_file: str
    source_format: str
    kind: str
    corpus_name: str | None = None
    skipped: bool = False
    replaced_batches: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    rejections: dict[str, int] = field(default_factory=dict)
    reader_stats: dict[str, int] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)
    seconds: float = 0.0
    message: str = ""
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RemovedBatches:
    """What a removal deleted: the load_batches rows and the rows per raw table."""

    batches: list[dict] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    not_found: list[str] = field(default_factory=list)  # with missing_ok: the unknown batches/corpora


def load_key(options: dict) -> dict:
    return {k: options[k] for k in LOAD_KEY_OPTIONS if options.get(k) not in (None, False, {})}


def skip_message(claim: BatchClaim, batch_id: int, old_options: dict, old_corpus: str | None) -> str:
    """Why a file is not loaded again (the same content is already batch `batch_id`)."""
    if old_corpus != claim.corpus:
        return (
            f"{claim.path}: already loaded as batch {batch_id} of corpus {old_corpus!r} (same content); "
            f"nothing loaded — a file belongs to one corpus: use --replace to load it as corpus "
            f"{claim.corpus!r} instead"
        )
    if load_key(old_options) != load_key(claim.options):
        return (
            f"{claim.path}: already loaded as batch {batch_id} with other options {load_key(old_options)}; "
            f"nothing loaded — use --replace to reload with {load_key(claim.options)}"
        )
    return (
        f"{claim.path}: already loaded as batch {batch_id} (same content, format {claim.fmt}); "
        "nothing loaded — use --replace to reload it"
    )


def changed_content_error(claim: BatchClaim, batch_id: int) -> InputError:
    return InputError(
        str(claim.path),
        None,
        f"a different version of this file is already loaded as batch {batch_id} (its content changed "
        "since); nothing loaded — use --replace to load the new content in its place",
    )


def finish_summary(summary: BatchSummary, claim: BatchClaim, counts: dict[str, int]) -> dict:
    """Fill a loaded batch's summary (counts, message); returns the options load_batches records."""
    summary.counts = counts
    options = dict(claim.options)
    if summary.reader_stats:
        options["reader_stats"] = summary.reader_stats
    if summary.bad_lines:
        options["bad_lines"] = summary.bad_lines
    verb = "replaced and loaded" if summary.replaced_batches else "loaded"
    shown = ", ".join(f"{k} {v:,}" for k, v in counts.items() if v)
    summary.message = f"{claim.path}: {verb} as batch {summary.batch_id} ({shown or 'no rows'})"
    if summary.reader_stats:  # e.g. mentions not found by the Google-RE matching rule
        summary.message += "; reader: " + ", ".join(
            f"{k} {v:,}" for k, v in sorted(summary.reader_stats.items())
        )
    return options


def batches_not_found(batch_ids: list[int], corpora: list[str], loaded: list[str]) -> InputError:
    """The error of a removal naming batches or corpora that are not there (nothing was removed)."""
    parts = [
        f"no batch {', '.join(map(str, batch_ids))}" if batch_ids else "",
        f"no corpus {', '.join(map(repr, corpora))}" if corpora else "",
    ]
    return InputError(
        "raw.load_batches",
        None,
        f"{' and '.join(p for p in parts if p)} (corpora loaded: {', '.join(loaded) or 'none'}; "
        "`sherliic-extract batches` lists the batches); nothing removed",
    )


# -- writing a batch's rows ----------------------------------------------------------------------------
class BatchWriter(ABC):
    """Writes the rows of one batch being loaded (every row gets the batch's id)."""

    batch_id: int

    @abstractmethod
    def write_rows(
        self, table: str, columns: Sequence[str], rows: Iterable[tuple], *, distinct: bool = False
    ) -> int:
        """Append `rows` (values of `columns`, without batch_id) to raw.<table>; `distinct`: each distinct
        row once (tables whose keys are sets). Returns the rows written."""


class PostgresBatchWriter(BatchWriter):
    """COPY into the raw tables, inside the batch's transaction (``connection`` for set-based SQL)."""

    def __init__(self, connection: psycopg.Connection, batch_id: int):
        self.connection, self.batch_id = connection, batch_id

    def write_rows(
        self, table: str, columns: Sequence[str], rows: Iterable[tuple], *, distinct: bool = False
    ) -> int:
        seen: set[tuple] = set()
        n = 0
        statement = f"copy raw.{table} (batch_id, {', '.join(columns)}) from stdin"
        with self.connection.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                if distinct:
                    if row in seen:
                        continue
                    seen.add(row)
                copy.write_row((self.batch_id, *row))
                n += 1
        return n


class SparkBatchWriter(BatchWriter):
    """Inserts into the batch's partitions of the Spark raw tables (``spark`` for distributed writes;
    ``staging``: a folder of this batch for Parquet written from the driver)."""

    def __init__(self, spark, batch_id: int, staging: Path):
        self.spark, self.batch_id, self.staging = spark, batch_id, staging

    def columns(self, table: str):
        """raw.<table>'s schema without the partition column."""
        from pyspark.sql.types import StructType  # the [spark] extra: only on this engine

        fields = [f for f in self.spark.table(f"raw.{table}").schema.fields if f.name != "batch_id"]
        return StructType(fields)

    def insert(self, table: str, data) -> None:
        """Append rows (an RDD or a list of tuples in the table's column order without batch_id)."""
        view = f"_load_{table}"
        self.spark.createDataFrame(data, self.columns(table)).createOrReplaceTempView(view)
        self.spark.sql(f"insert into raw.{table} partition (batch_id = {self.batch_id}) select * from {view}")

    def write_rows(
        self, table: str, columns: Sequence[str], rows: Iterable[tuple], *, distinct: bool = False
    ) -> int:
        schema = self.columns(table)
        if list(columns) != schema.names:
            raise ValueError(f"raw.{table} takes the columns {schema.names}, not {list(columns)}")
        folder = self.staging / table
        rows = iter(rows)
        while part := list(islice(rows, SPARK_CHUNK_ROWS)):
            self.spark.createDataFrame(part, schema).write.mode("append").parquet(str(folder))
        if not folder.exists():
            return 0
        frame = self.spark.read.schema(schema).parquet(str(folder))
        (frame.distinct() if distinct else frame).createOrReplaceTempView(f"_load_{table}")
        self.spark.sql(
            f"insert into raw.{table} partition (batch_id = {self.batch_id}) select * from _load_{table}"
        )
        return self.count(table)

    def count(self, table: str, expression: str = "count(*)") -> int:
        query = f"select {expression} from raw.{table} where batch_id = {self.batch_id}"
        return int(self.spark.sql(query).collect()[0][0])


# -- the store ---------------------------------------------------------------------------------------
class BatchStore(ABC):
    """raw.load_batches of one warehouse (open with :func:`open_batch_store`)."""

    @abstractmethod
    def load(self, claim: BatchClaim, write: Callable[[BatchWriter], dict[str, int]]) -> BatchSummary:
        """Load one batch: claim it, ``write(writer)`` its rows, publish it (module doc)."""

    @abstractmethod
    def batches(self, *, corpus: str | None = None, kind: str | None = None) -> list[dict]:
        """Every batch (any status), oldest first; optionally of one corpus or kind."""

    @abstractmethod
    def remove(
        self, *, batch_ids: Iterable[int] = (), corpora: Iterable[str] = (), missing_ok: bool = False
    ) -> RemovedBatches:
        """Delete batches (by id, and every batch of the named corpora, any status) with all their rows:
        an unknown batch id or corpus name removes nothing (an InputError naming it) unless
        ``missing_ok`` (then it is in ``not_found``). The marts keep the old graph until the next build."""

    def loaded_corpora(self) -> list[str]:
        """The names of the corpora with a loaded batch."""
        rows = self.batches(kind="corpus")
        return sorted({row["corpus_name"] for row in rows if row["status"] == "loaded"} - {None})


@contextmanager
def open_batch_store(target: Target) -> Iterator[BatchStore]:
    """The batch store of the Target's raw schema (on Spark the session stays for the process's next
    loads; the command that started it ends with it)."""
    if target.engine == "spark":
        yield SparkBatchStore(target.spark_session("sherliic-load"), target.spark.catalog_dir / "staging")
        return
    yield PostgresBatchStore(target)


def _names(batch_ids: Iterable[int], corpora: Iterable[str]) -> tuple[list[int], list[str]]:
    batch_ids, corpora = sorted(set(batch_ids)), sorted(set(corpora))
    if not batch_ids and not corpora:
        raise ValueError("name the batches to remove (batch ids or corpus names)")
    return batch_ids, corpora


def _lock_key(text: str) -> int:
    """A signed 64-bit advisory-lock key derived from a string (stable across processes)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


class PostgresBatchStore(BatchStore):
    def __init__(self, target: Target):
        self.target = target

    def load(self, claim: BatchClaim, write: Callable[[BatchWriter], dict[str, int]]) -> BatchSummary:
        started = time.perf_counter()
        summary = BatchSummary(None, claim.source, claim.fmt, claim.kind, corpus_name=claim.corpus)
        self.target.ensure_schema()
        try:
            with self.target.connect() as conn, conn.transaction():
                if self._claim(conn, claim, summary):
                    counts = write(PostgresBatchWriter(conn, summary.batch_id))
                    options = finish_summary(summary, claim, counts)
                    conn.execute(
                        # clock_timestamp(): now() is the transaction's start, i.e. started_at
                        "update raw.load_batches set status = 'loaded', finished_at = clock_timestamp(), "
                        f"{', '.join(c + ' = %s' for c in COUNT_COLUMNS)}, options = %s where batch_id = %s",
                        (*(counts.get(k, 0) for k in COUNT_KEYS), json.dumps(options), summary.batch_id),
                    )
        except InputError as exc:
            self._record_failure(claim, str(exc))
            raise
        except psycopg.OperationalError as exc:  # the server went away mid-load: the batch rolled back
            raise DatabaseUnavailable(
                f"lost the database at {self.target.describe()} while loading {claim.path} (nothing of it "
                f"was kept): {' '.join(str(exc).split())}"
            ) from None
        summary.seconds = round(time.perf_counter() - started, 3)
        return summary

    def _claim(self, conn: psycopg.Connection, claim: BatchClaim, summary: BatchSummary) -> bool:
        """Lock, then skip (False) or insert the 'loading' row (True), deleting the batches replaced."""
        # Lock in a fixed order (sorted keys): two loaders never wait on each other crosswise.
        keys = {_lock_key(f"sherliic-load:{claim.checksum}"), _lock_key(f"sherliic-load:{claim.source}")}
        for key in sorted(keys):
            conn.execute("select pg_advisory_xact_lock(%s)", (key,))
        loaded = (
            "select batch_id, options, corpus_name from raw.load_batches where kind = %s "
            "and source_format = %s and status = 'loaded' "
        )
        replace = claim.replace
        existing = conn.execute(
            loaded + "and (checksum = %s or (%s and source_file = %s)) order by batch_id",
            (claim.kind, claim.fmt, claim.checksum, replace and claim.by_path, claim.source),
        ).fetchall()
        if claim.supersede and not existing:
            existing = conn.execute(
                loaded + "and source_file = %s order by batch_id", (claim.kind, claim.fmt, claim.source)
            ).fetchall()
            replace = bool(existing)
        if not existing and not replace and not claim.supersede and claim.by_path:
            changed = conn.execute(
                loaded + "and source_file = %s order by batch_id", (claim.kind, claim.fmt, claim.source)
            ).fetchone()
            if changed is not None:
                raise changed_content_error(claim, changed[0])
        if existing and not replace:
            batch_id, old_options, old_corpus = existing[0]
            summary.batch_id, summary.corpus_name, summary.skipped = batch_id, old_corpus, True
            summary.message = skip_message(claim, batch_id, old_options, old_corpus)
            return False
        if existing:
            summary.replaced_batches = [row[0] for row in existing]
            self.delete(conn, summary.replaced_batches)
        summary.batch_id = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status, options, "
            "corpus_name) values (%s, %s, %s, %s, 'loading', %s, %s) returning batch_id",
            (claim.source, claim.fmt, claim.kind, claim.checksum, json.dumps(claim.options), claim.corpus),
        ).fetchone()[0]
        return True

    @staticmethod
    def delete(conn: psycopg.Connection, batch_ids: list[int]) -> None:
        """Delete load_batches rows inside the caller's transaction (their rows go by cascade): a loader
        whose new batch takes the place of others (benchmark files with the same item ids)."""
        conn.execute("delete from raw.load_batches where batch_id = any(%s)", (batch_ids,))

    def _record_failure(self, claim: BatchClaim, message: str) -> None:
        """A 'failed' row without data, in its own short transaction (the batch itself rolled back)."""
        try:
            with self.target.connect(autocommit=True) as conn:
                conn.execute(
                    "insert into raw.load_batches (source_file, source_format, kind, checksum, status, "
                    "options, corpus_name, finished_at) "
                    "values (%s, %s, %s, %s, 'failed', %s, %s, clock_timestamp())",
                    (
                        claim.source,
                        claim.fmt,
                        claim.kind,
                        claim.checksum,
                        json.dumps({**claim.options, "error": message}),
                        claim.corpus,
                    ),
                )
        except (psycopg.Error, DatabaseUnavailable):
            pass  # recording the failure must never hide the InputError itself

    def batches(self, *, corpus: str | None = None, kind: str | None = None) -> list[dict]:
        self.target.ensure_schema()
        with self.target.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
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

    def remove(
        self, *, batch_ids: Iterable[int] = (), corpora: Iterable[str] = (), missing_ok: bool = False
    ) -> RemovedBatches:
        batch_ids, corpora = _names(batch_ids, corpora)
        self.target.ensure_schema()
        removed = RemovedBatches()
        with self.target.connect() as conn, conn.transaction():
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
            removed.not_found = [f"batch {i}" for i in missing_ids] + [
                f"corpus {c!r}" for c in missing_corpora
            ]
            if removed.not_found and not missing_ok:
                loaded = conn.execute(
                    "select distinct corpus_name from raw.load_batches where kind = 'corpus' "
                    "and status = 'loaded' order by corpus_name"
                ).fetchall()
                raise batches_not_found(missing_ids, missing_corpora, [row[0] for row in loaded])
            for table in tables:  # names from the catalog, not from user input
                deleted = conn.execute(f"delete from raw.{table} where batch_id = any(%s)", (ids,)).rowcount
                if deleted:
                    removed.rows[table] = deleted
            self.delete(conn, ids)
        return removed


class SparkBatchStore(BatchStore):
    """load_batches on the Spark catalog: a small table, read whole and rewritten whole on each change."""

    def __init__(self, spark, staging: Path):
        self.spark, self.staging = spark, staging

    def load(self, claim: BatchClaim, write: Callable[[BatchWriter], dict[str, int]]) -> BatchSummary:
        started = time.perf_counter()
        summary = BatchSummary(None, claim.source, claim.fmt, claim.kind, corpus_name=claim.corpus)
        apply_spark_schema(self.spark)
        rows = self._recover(self._read())
        loaded = sorted(
            (
                r
                for r in rows
                if r["status"] == "loaded" and r["kind"] == claim.kind and r["source_format"] == claim.fmt
            ),
            key=lambda r: r["batch_id"],
        )
        existing = [
            r
            for r in loaded
            if r["checksum"] == claim.checksum
            or (claim.replace and claim.by_path and r["source_file"] == claim.source)
        ]
        if not existing and not claim.replace and claim.by_path:
            changed = [r for r in loaded if r["source_file"] == claim.source]
            if changed:
                raise changed_content_error(claim, changed[0]["batch_id"])
        if existing and not claim.replace:
            old = existing[0]
            summary.batch_id, summary.corpus_name, summary.skipped = old["batch_id"], old["corpus_name"], True
            summary.message = skip_message(
                claim, old["batch_id"], json.loads(old["options"] or "{}"), old["corpus_name"]
            )
            return summary
        batch_id = max((r["batch_id"] for r in rows), default=0) + 1
        summary.batch_id = batch_id
        row = dict.fromkeys(SPARK_BATCH_COLUMNS, 0)
        row.update(
            batch_id=batch_id,
            source_file=claim.source,
            source_format=claim.fmt,
            kind=claim.kind,
            checksum=claim.checksum,
            status="loading",
            options=json.dumps(claim.options),
            started_at=datetime.now(UTC),
            finished_at=None,
            corpus_name=claim.corpus,
        )
        self._write([*rows, row])
        replaced = [old["batch_id"] for old in existing]
        staging = self.staging / str(batch_id)
        try:
            counts = write(SparkBatchWriter(self.spark, batch_id, staging))
            summary.replaced_batches = replaced
            options = finish_summary(summary, claim, counts)
            row.update(zip(COUNT_COLUMNS, (counts.get(k, 0) for k in COUNT_KEYS), strict=True))
            row.update(status="loaded", options=json.dumps(options), finished_at=datetime.now(UTC))
            # publish: one rewrite makes the batch visible and the replaced ones invisible
            self._write([r for r in rows if r["batch_id"] not in replaced] + [row])
        except BaseException as exc:
            summary.replaced_batches = []
            self._fail(claim, rows, row, str(exc))
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        for old in existing:  # no longer visible: their load_batches rows are gone
            self._drop_partitions(old["batch_id"], old["kind"])
        summary.seconds = round(time.perf_counter() - started, 3)
        return summary

    def _read(self) -> list[dict]:
        return [row.asDict() for row in self.spark.table("raw.load_batches").collect()]

    def _write(self, rows: list[dict]) -> None:
        schema = self.spark.table("raw.load_batches").schema
        data = [tuple(row[c] for c in SPARK_BATCH_COLUMNS) for row in rows]
        self.spark.createDataFrame(data, schema).write.insertInto("raw.load_batches", overwrite=True)

    def _drop_partitions(self, batch_id: int, kind: str) -> None:
        for table in SPARK_BATCH_TABLES.get(kind, ()):
            self.spark.sql(f"alter table raw.{table} drop if exists partition (batch_id = {int(batch_id)})")

    def _recover(self, rows: list[dict]) -> list[dict]:
        """Batches a crashed load left 'loading' become 'failed' and lose their rows."""
        stale = [row for row in rows if row["status"] == "loading"]
        for row in stale:
            self._drop_partitions(row["batch_id"], row["kind"])
            options = json.loads(row["options"] or "{}")
            row.update(status="failed", options=json.dumps({**options, "error": "interrupted load"}))
        if stale:
            self._write(rows)
        return rows

    def _fail(self, claim: BatchClaim, rows: list[dict], row: dict, message: str) -> None:
        """A 'failed' row without data (its partitions dropped); never hides the error itself."""
        try:
            self._drop_partitions(row["batch_id"], row["kind"])
            row.update(status="failed", options=json.dumps({**claim.options, "error": message}))
            row.update(dict.fromkeys(COUNT_COLUMNS, 0), finished_at=datetime.now(UTC))
            self._write([*rows, row])
        except Exception:  # noqa: BLE001 - the load's own error is the one to report
            pass

    def batches(self, *, corpus: str | None = None, kind: str | None = None) -> list[dict]:
        apply_spark_schema(self.spark)
        rows = []
        for row in sorted(self._read(), key=lambda r: r["batch_id"]):
            if (corpus is None or row["corpus_name"] == corpus) and (kind is None or row["kind"] == kind):
                options = json.loads(row["options"] or "{}")
                rows.append({**row, "error": options.get("error"), "type_source": options.get("type_source")})
        return rows

    def remove(
        self, *, batch_ids: Iterable[int] = (), corpora: Iterable[str] = (), missing_ok: bool = False
    ) -> RemovedBatches:
        """Unknown names are refused before anything changes; then one rewrite of load_batches
        unpublishes the batches and their partitions are dropped (a crash in between leaves only
        unreferenced partitions, which no model reads)."""
        batch_ids, corpora = _names(batch_ids, corpora)
        apply_spark_schema(self.spark)
        rows = self._read()
        chosen = [
            r
            for r in rows
            if r["batch_id"] in batch_ids or (r["kind"] == "corpus" and r["corpus_name"] in corpora)
        ]
        found = {r["batch_id"] for r in chosen}
        found_corpora = {r["corpus_name"] for r in chosen if r["kind"] == "corpus"}
        missing_ids = [i for i in batch_ids if i not in found]
        missing_corpora = [c for c in corpora if c not in found_corpora]
        removed = RemovedBatches(
            batches=[
                {k: r[k] for k in ("batch_id", "kind", "corpus_name", "source_file", "status")}
                for r in chosen
            ],
            not_found=[f"batch {i}" for i in missing_ids] + [f"corpus {c!r}" for c in missing_corpora],
        )
        if removed.not_found and not missing_ok:
            loaded = {r["corpus_name"] for r in rows if r["kind"] == "corpus" and r["status"] == "loaded"}
            raise batches_not_found(missing_ids, missing_corpora, sorted(loaded - {None}))
        for r in chosen:
            for table in SPARK_BATCH_TABLES.get(r["kind"], ()):
                n = self.spark.sql(f"select count(*) from raw.{table} where batch_id = {int(r['batch_id'])}")
                removed.rows[table] = removed.rows.get(table, 0) + n.collect()[0][0]
        if chosen:
            self._write([r for r in rows if r["batch_id"] not in found])
            for r in chosen:
                self._drop_partitions(r["batch_id"], r["kind"])
        removed.rows = {table: n for table, n in removed.rows.items() if n}
        return removed
