"""Distributed extraction and loading on Spark (SHERLIIC_ENGINE=spark; `sherliic-extract` uses it then).

The same pipeline as on Postgres, run as Spark jobs:

- the reader (:func:`extract.formats.reader`) runs on the driver and the documents go to the cluster in
  chunks (`sc.parallelize`, TASK_DOCUMENTS documents per task); reading is ~1 % of the extraction cost,
  so the driver keeps the executors busy up to a few hundred cores (a corpus split into many files can
  also be loaded by several drivers one after the other, one batch per file);
- each task calls :meth:`extract.pipeline.Extraction.outcomes` on its documents (one spaCy model per
  Python worker: ``load_nlp`` is cached and Spark reuses its Python workers) and turns the results into
  rows with :mod:`extract.corpus_rows`, the row logic the Postgres loader uses too;
- one Spark job per chunk runs the extraction; the chunks' records stay cached (memory and disk) until
  the file is done, then each table's rows go into the batch's partition in one job (the Spark raw
  tables are partitioned by ``batch_id``, warehouse/schema/spark/raw.sql); sentence and instance ids
  are dense and follow the input order like Postgres' identity columns.

Batch bookkeeping as on Postgres (:mod:`extract.batches`): one file = one batch with its sha256; the
same file is not loaded twice (``replace`` reloads it); ``skip_bad`` counts bad records; bad input is
an :class:`InputError` ``file:line: problem``. Publishing is the last step: the batch's rows are staged
in its partitions while its load_batches row says 'loading', which dbt does not read (its models keep
``status = 'loaded'`` batches only); then one rewrite of the small load_batches table marks it 'loaded'
and drops the batches it replaces. A failed load is recorded as 'failed' and its partitions dropped; a
crashed one ('loading' left behind) is cleaned up by the next load. The embedded Derby metastore
admits one process at a time, so loads never run concurrently on the local catalog.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from functools import partial
from itertools import islice
from pathlib import Path

from deppath.records import Document
from extract.batches import (
    MAX_KEPT_ERRORS,
    BatchSummary,
    RemovedBatches,
    _BadLines,
    _take,
    batch_counts,
    batches_not_found,
    checked_documents,
    corpus_name,
    corpus_plan,
    file_checksum,
    finish_summary,
    skip_message,
    type_table_plan,
)
from extract.corpus_rows import Tally, document_rows, entity_name, inline_type_rows
from extract.formats.common import check_input_file
from extract.pipeline import TASK_DOCUMENTS, Extraction, Feed
from warehouse.engine import spark_dir
from warehouse.errors import InputError
from warehouse.spark_raw import apply_spark_schema

TASKS_PER_CORE = 4  # tasks of a chunk per core: stragglers matter less, the driver reads less often
TYPE_CHUNK_ROWS = 200_000  # type-table rows per DataFrame sent from the driver
# the tables holding a batch's rows, per kind of batch (each partitioned by batch_id)
BATCH_TABLES = {
    "corpus": ("sentences", "relation_instances", "entities", "entity_types", "path_rejections"),
    "types": ("entity_types",),
    "type_map": ("type_mappings",),
}
LOAD_BATCH_COLUMNS = (
    "batch_id source_file source_format kind checksum status n_documents n_sentences n_mentions n_instances "
    "n_rows n_bad_lines options started_at finished_at corpus_name"
).split()


# -- the tasks (run in Spark's Python workers) ---------------------------------------------------------
def _partition_records(extraction: Extraction | None, index: int, items: Iterable[tuple]) -> Iterator[tuple]:
    """One task: its documents' outcomes as tagged records.

    items: (document index in the file, Document) or, without an extraction (the reader brings its own
    parses), (document index, (Document, ExtractionResult)). Records: ("s", task, sentence#, document_id,
    line, sentence_index, text), ("i", task, instance#, sentence#, path, arg1, arg2, subject_side),
    ("n", entity, name, count), ("t", entity, source, type, count) and one ("p", task, summary)."""
    positions: deque[int] = deque()

    def documents() -> Iterator[Document]:
        for position, document in items:
            positions.append(position)
            yield document

    if extraction is None:
        outcomes = ((document, result, 1) for document, result in documents())
    else:
        outcomes = extraction.outcomes(documents())
    tally = Tally()
    n_sentences = n_instances = parsed = n_errors = 0
    errors: list[tuple[int, str, int | None, str]] = []
    for document, result, sentences in outcomes:
        position = positions.popleft()
        parsed += sentences
        if isinstance(result, InputError):
            n_errors += 1
            if len(errors) < MAX_KEPT_ERRORS:
                errors.append((position, result.file, result.line, result.problem))
            continue
        tally.add(document, result)
        sentence_rows, instance_rows = document_rows(document, result)
        for row in sentence_rows:
            yield ("s", index, n_sentences, *row)
            n_sentences += 1
        first = n_sentences - len(sentence_rows)
        for sentence, *instance in instance_rows:
            yield ("i", index, n_instances, first + sentence, *instance)
            n_instances += 1
    for entity, names in tally.names.items():
        for name, n in names.items():
            yield ("n", entity, name, n)
    for (entity, source), types in tally.inline_types.items():
        for type_name, n in types.items():
            yield ("t", entity, source, type_name, n)
    summary = {
        "sentences": n_sentences,
        "instances": n_instances,
        "documents": tally.documents,
        "mentions": tally.mentions,
        "sentences_parsed": parsed,
        "rejections": dict(tally.rejections),
        "errors": errors,
        "n_errors": n_errors,
    }
    yield ("p", index, summary)


def _is(kind: str) -> Callable[[tuple], bool]:
    return lambda record: record[0] == kind


# -- the batch lifecycle on the Spark catalog ----------------------------------------------------------
class SparkBatch:
    """Skip/replace, stage, publish or record the failure: extract.batches._Batch on Spark tables."""

    def __init__(
        self, spark, path: Path, fmt: str, kind: str, replace: bool, options: dict, corpus: str | None = None
    ):
        self.spark, self.path, self.fmt, self.kind = spark, path, fmt, kind
        self.replace, self.options, self.corpus = replace, options, corpus
        self.checksum = file_checksum(path)
        self.source = str(path.resolve())
        self.summary = BatchSummary(None, self.source, fmt, kind, corpus_name=corpus)
        self.staging = spark_dir() / "staging"

    def _batches(self) -> list[dict]:
        return read_batches(self.spark)

    def _write_batches(self, rows: list[dict]) -> None:
        write_batches(self.spark, rows)

    def _drop_partitions(self, batch_ids: Iterable[int], kind: str | None = None) -> None:
        drop_partitions(self.spark, batch_ids, kind or self.kind)

    def _recover(self, rows: list[dict]) -> list[dict]:
        """Batches a crashed load left 'loading' become 'failed' and lose their rows."""
        stale = [row for row in rows if row["status"] == "loading"]
        if not stale:
            return rows
        for row in stale:
            self._drop_partitions([row["batch_id"]], row["kind"])
            options = json.loads(row["options"] or "{}")
            row.update(status="failed", options=json.dumps({**options, "error": "interrupted load"}))
        self._write_batches(rows)
        return rows

    def run(self, write: Callable[[int], dict[str, int]]) -> BatchSummary:
        started = time.perf_counter()
        apply_spark_schema(self.spark)
        rows = self._recover(self._batches())
        loaded = sorted(
            (row for row in rows if row["status"] == "loaded" and row["kind"] == self.kind),
            key=lambda row: row["batch_id"],
        )
        existing = [
            row
            for row in loaded
            if row["source_format"] == self.fmt
            and (row["checksum"] == self.checksum or (self.replace and row["source_file"] == self.source))
        ]
        if existing and not self.replace:
            old = existing[0]
            self.summary.batch_id = old["batch_id"]
            self.summary.corpus_name = old["corpus_name"]
            self.summary.skipped = True
            self.summary.message = skip_message(
                self.path,
                self.fmt,
                old["batch_id"],
                json.loads(old["options"] or "{}"),
                self.options,
                old["corpus_name"],
                self.corpus,
            )
            return self.summary
        batch_id = max((row["batch_id"] for row in rows), default=0) + 1
        self.summary.batch_id = batch_id
        row = dict.fromkeys(LOAD_BATCH_COLUMNS, 0)
        row.update(
            batch_id=batch_id,
            source_file=self.source,
            source_format=self.fmt,
            kind=self.kind,
            checksum=self.checksum,
            status="loading",
            options=json.dumps(self.options),
            started_at=datetime.now(UTC),
            finished_at=None,
            corpus_name=self.corpus,
        )
        self._write_batches([*rows, row])
        replaced = [old["batch_id"] for old in existing]
        self.summary.replaced_batches = replaced
        try:
            counts = write(batch_id)
            options = finish_summary(self.summary, self.path, counts, self.options)
            row.update(zip(LOAD_BATCH_COLUMNS[6:12], batch_counts(counts), strict=True))
            row.update(status="loaded", options=json.dumps(options), finished_at=datetime.now(UTC))
            # publish: one rewrite makes the batch visible and the replaced ones invisible
            self._write_batches([r for r in rows if r["batch_id"] not in replaced] + [row])
        except BaseException as exc:
            self.summary.replaced_batches = []
            self._fail(rows, row, str(exc))
            raise
        finally:
            shutil.rmtree(self.staging / str(batch_id), ignore_errors=True)
        self._drop_partitions(replaced)  # no longer visible: their load_batches rows are gone
        self.summary.seconds = round(time.perf_counter() - started, 3)
        return self.summary

    def _fail(self, rows: list[dict], row: dict, message: str) -> None:
        """A 'failed' row without data (its staged partitions dropped); never hides the error itself."""
        try:
            self._drop_partitions([row["batch_id"]])
            options = {**self.options, "error": message}
            row.update(status="failed", options=json.dumps(options), finished_at=datetime.now(UTC))
            for key in LOAD_BATCH_COLUMNS[6:12]:
                row[key] = 0
            self._write_batches([*rows, row])
        except Exception:  # noqa: BLE001 - the load's own error is the one to report
            pass


# load_batches is small: read whole, rewritten whole when a status changes
def read_batches(spark) -> list[dict]:
    return [row.asDict() for row in spark.table("raw.load_batches").collect()]


def write_batches(spark, rows: list[dict]) -> None:
    schema = spark.table("raw.load_batches").schema
    data = [tuple(row[c] for c in LOAD_BATCH_COLUMNS) for row in rows]
    spark.createDataFrame(data, schema).write.insertInto("raw.load_batches", overwrite=True)


def drop_partitions(spark, batch_ids: Iterable[int], kind: str) -> None:
    for batch_id in batch_ids:
        for table in BATCH_TABLES.get(kind, ()):
            spark.sql(f"alter table raw.{table} drop if exists partition (batch_id = {int(batch_id)})")


def list_batches(spark, *, corpus: str | None = None, kind: str | None = None) -> list[dict]:
    """extract.batches.list_batches on the Spark catalog."""
    apply_spark_schema(spark)
    rows = []
    for row in sorted(read_batches(spark), key=lambda r: r["batch_id"]):
        if (corpus is None or row["corpus_name"] == corpus) and (kind is None or row["kind"] == kind):
            options = json.loads(row["options"] or "{}")
            rows.append({**row, "error": options.get("error"), "type_source": options.get("type_source")})
    return rows


def remove_batches(
    spark, *, batch_ids: Iterable[int] = (), corpora: Iterable[str] = (), missing_ok: bool = False
) -> RemovedBatches:
    """extract.batches.remove_batches on the Spark catalog: unknown names are refused before anything
    changes; then one rewrite of load_batches unpublishes the batches and their partitions are dropped
    (a crash in between leaves only unreferenced partitions, which no model reads)."""
    batch_ids, corpora = sorted(set(batch_ids)), sorted(set(corpora))
    if not batch_ids and not corpora:
        raise ValueError("name the batches to remove (batch ids or corpus names)")
    apply_spark_schema(spark)
    rows = read_batches(spark)
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
            {k: r[k] for k in ("batch_id", "kind", "corpus_name", "source_file", "status")} for r in chosen
        ],
        not_found=[f"batch {i}" for i in missing_ids] + [f"corpus {c!r}" for c in missing_corpora],
    )
    if removed.not_found and not missing_ok:
        loaded = {r["corpus_name"] for r in rows if r["kind"] == "corpus" and r["status"] == "loaded"}
        raise batches_not_found(missing_ids, missing_corpora, sorted(loaded - {None}))
    if chosen:
        for r in chosen:
            for table in BATCH_TABLES.get(r["kind"], ()):
                n = spark.sql(f"select count(*) from raw.{table} where batch_id = {int(r['batch_id'])}")
                removed.rows[table] = removed.rows.get(table, 0) + n.collect()[0][0]
        write_batches(spark, [r for r in rows if r["batch_id"] not in found])
        for r in chosen:
            drop_partitions(spark, [r["batch_id"]], r["kind"])
    removed.rows = {table: n for table, n in removed.rows.items() if n}
    return removed


# -- loaders -------------------------------------------------------------------------------------------
def _insert(spark, table: str, batch_id: int, data, schema) -> None:
    """Append rows (an RDD or list of tuples in the table's column order without batch_id) to the batch's
    partition of raw.<table>."""
    view = f"_load_{table}"
    spark.createDataFrame(data, schema).createOrReplaceTempView(view)
    spark.sql(f"insert into raw.{table} partition (batch_id = {int(batch_id)}) select * from {view}")


def _columns(spark, table: str):
    """raw.<table>'s schema without the partition column."""
    from pyspark.sql.types import StructType

    fields = [f for f in spark.table(f"raw.{table}").schema.fields if f.name != "batch_id"]
    return StructType(fields)


def load_corpus(
    spark,
    path: str | Path,
    fmt: str,
    *,
    corpus: str | None = None,
    replace: bool = False,
    skip_bad: bool = False,
    ner_types: bool = False,
    ner_mentions: bool = False,
    limit: int | None = None,
    reader_options: dict | None = None,
    chunk_documents: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> BatchSummary:
    """Read one corpus file on the driver, extract it on the cluster, load it as one batch (module doc).

    chunk_documents: documents sent to the cluster per Spark job (default TASKS_PER_CORE tasks of
    TASK_DOCUMENTS documents per core of spark.default.parallelism)."""
    path = check_input_file(Path(path))
    corpus = corpus_name(path, corpus)
    corpus_reader, extraction, options = corpus_plan(
        path, fmt, reader_options, ner_types=ner_types, ner_mentions=ner_mentions, limit=limit
    )
    from pyspark import StorageLevel

    sc = spark.sparkContext
    options = {"engine": "spark", "parallelism": sc.defaultParallelism, "skip_bad": skip_bad, **options}
    batch = SparkBatch(spark, path, fmt, "corpus", replace, options, corpus)
    bad = _BadLines() if skip_bad else None
    stats: Counter = Counter()
    chunk = chunk_documents or sc.defaultParallelism * TASKS_PER_CORE * TASK_DOCUMENTS

    def write(batch_id: int) -> dict[str, int]:
        if extraction is None:
            items: Iterable = corpus_reader.read_extracted(path, on_error=bad)
        else:
            items = corpus_reader.read(path, on_error=bad, stats=stats)
        items = checked_documents(items, path, bad)  # the same record checks as the Postgres loader
        if limit is not None:
            items = _take(items, limit)
        ids = {
            "sentence": _next_id(spark, "sentences", "sentence_id"),
            "instance": _next_id(spark, "relation_instances", "instance_id"),
        }
        totals: Counter = Counter()
        rejections: Counter = Counter()
        errors: list[tuple[int, str, int | None, str]] = []
        # a reader's InputError is raised after the documents read before it, as on Postgres
        feed = Feed(items)
        items = enumerate(feed)
        started = time.perf_counter()
        chunks: list[_Chunk] = []
        try:
            while part := list(islice(items, chunk)):
                slices = max(1, min(len(part) // TASK_DOCUMENTS + 1, chunk // TASK_DOCUMENTS))
                records = (
                    sc.parallelize(part, slices)
                    .mapPartitionsWithIndex(partial(_partition_records, extraction))
                    .persist(
                        StorageLevel.MEMORY_AND_DISK
                    )  # the extraction runs once; rows are written at the end
                )
                summaries = dict(records.filter(_is("p")).map(_task_summary).collect())
                chunks.append(_Chunk(records, summaries, ids))
                chunk_errors = sorted(e for s in summaries.values() for e in s["errors"])
                n_errors = sum(s["n_errors"] for s in summaries.values())
                if n_errors and bad is None:
                    raise InputError(*chunk_errors[0][1:])
                if bad is not None:
                    bad.count += n_errors
                    errors.extend(chunk_errors)
                for s in summaries.values():
                    for key in ("sentences", "instances", "documents", "mentions", "sentences_parsed"):
                        totals[key] += s[key]
                    rejections.update(s["rejections"])
                if progress is not None:
                    progress(len(part))
            if feed.error is not None:
                raise feed.error
            batch.summary.timings["extract_s"] = round(time.perf_counter() - started, 3)
            if totals["documents"] == 0:
                raise InputError(str(path), None, "no documents in the file")
            writes_started = time.perf_counter()
            _write_rows(spark, batch_id, chunks)
            n_entities, n_type_rows, n_typed = _write_entities(spark, batch_id, chunks)
            batch.summary.timings["write_s"] = round(time.perf_counter() - writes_started, 3)
        finally:
            for part_chunk in chunks:
                part_chunk.records.unpersist()
        if bad is not None:  # reader errors (driver) first, then the tasks' in input order
            bad.messages = (bad.messages + [str(InputError(*e[1:])) for e in sorted(errors)])[
                :MAX_KEPT_ERRORS
            ]
        rejection_rows = sorted(rejections.items())
        _insert(spark, "path_rejections", batch_id, rejection_rows, _columns(spark, "path_rejections"))
        stats["sentences_parsed"] += totals.pop("sentences_parsed")
        batch.summary.rejections = dict(rejection_rows)
        batch.summary.reader_stats = dict(stats)
        batch.summary.bad_lines = bad.messages if bad else []
        return {
            "documents": totals["documents"],
            "sentences": totals["sentences"],
            "mentions": totals["mentions"],
            "entities": n_entities,
            "entity_types": n_type_rows,
            "typed_entities": n_typed,
            "instances": totals["instances"],
            "rejected": sum(rejections.values()),
            "bad_lines": bad.count if bad else 0,
        }

    return batch.run(write)


def _next_id(spark, table: str, column: str) -> int:
    """The next free id of raw.<table> (ids are dense per batch, in input order)."""
    value = spark.sql(f"select max({column}) from raw.{table}").collect()[0][0]
    return (value or 0) + 1


def _task_summary(record: tuple) -> tuple[int, dict]:
    return record[1], record[2]


class _Chunk:
    """One chunk's cached records and the first sentence and instance id of each of its tasks (each
    task's rows are numbered after the previous tasks', so ids follow the input order)."""

    def __init__(self, records, summaries: dict, ids: dict):
        self.records = records
        self.sentence_first, self.instance_first = {}, {}
        for task in sorted(summaries):
            self.sentence_first[task], self.instance_first[task] = ids["sentence"], ids["instance"]
            ids["sentence"] += summaries[task]["sentences"]
            ids["instance"] += summaries[task]["instances"]

    def sentences(self):
        return self.records.filter(_is("s")).map(partial(_sentence_row, self.sentence_first))

    def instances(self):
        return self.records.filter(_is("i")).map(
            partial(_instance_row, self.sentence_first, self.instance_first)
        )


def _sentence_row(sentence_first: dict, r: tuple) -> tuple:
    return (sentence_first[r[1]] + r[2], *r[3:])


def _instance_row(sentence_first: dict, instance_first: dict, r: tuple) -> tuple:
    return (instance_first[r[1]] + r[2], sentence_first[r[1]] + r[3], *r[4:])


def _write_rows(spark, batch_id: int, chunks: list[_Chunk]) -> None:
    """The batch's sentences and relation instances into its partitions, one Spark job per table."""
    sc = spark.sparkContext
    sentences = sc.union([c.sentences() for c in chunks])
    _insert(spark, "sentences", batch_id, sentences, _columns(spark, "sentences"))
    instances = sc.union([c.instances() for c in chunks])
    _insert(spark, "relation_instances", batch_id, instances, _columns(spark, "relation_instances"))


def _write_entities(spark, batch_id: int, chunks: list[_Chunk]) -> tuple[int, int, int]:
    """raw.entities and the inline raw.entity_types of the batch from the tasks' counts, with the
    Postgres loader's choice of name and NER type (extract.corpus_rows); (entities, type rows,
    typed entities)."""
    sc = spark.sparkContext
    names = sc.union([c.records.filter(_is("n")) for c in chunks])
    entity_rows = (
        names.map(lambda r: ((r[1], r[2]), r[3]))
        .reduceByKey(lambda a, b: a + b)
        .map(lambda kv: (kv[0][0], (kv[0][1], kv[1])))
        .groupByKey()
        .map(lambda kv: (kv[0], entity_name(Counter(dict(kv[1])))))
    )
    _insert(spark, "entities", batch_id, entity_rows, _columns(spark, "entities"))
    types = sc.union([c.records.filter(_is("t")) for c in chunks])
    type_rows = (
        types.map(lambda r: ((r[1], r[2], r[3]), r[4]))
        .reduceByKey(lambda a, b: a + b)
        .map(lambda kv: ((kv[0][0], kv[0][1]), (kv[0][2], kv[1])))
        .groupByKey()
        .flatMap(lambda kv: inline_type_rows(kv[0][0], kv[0][1], Counter(dict(kv[1]))))
    )
    _insert(spark, "entity_types", batch_id, type_rows, _columns(spark, "entity_types"))
    counts = spark.sql(
        f"select (select count(*) from raw.entities where batch_id = {batch_id}), count(*), "
        f"count(distinct entity_id) from raw.entity_types where batch_id = {batch_id}"
    ).collect()[0]
    return int(counts[0]), int(counts[1]), int(counts[2])


def _load_rows(spark, batch_id: int, table: str, rows: Iterator[tuple], staging: Path) -> int:
    """Rows read on the driver (the table's columns without batch_id) into the batch's partition, each
    distinct row once (the raw tables' primary keys are sets); returns the rows written."""
    schema = _columns(spark, table)
    folder = str(staging / table)
    while part := list(islice(rows, TYPE_CHUNK_ROWS)):
        spark.createDataFrame(part, schema).write.mode("append").parquet(folder)
    if not Path(folder).exists():
        return 0
    spark.read.schema(schema).parquet(folder).distinct().createOrReplaceTempView(f"_load_{table}")
    spark.sql(f"insert into raw.{table} partition (batch_id = {int(batch_id)}) select * from _load_{table}")
    return spark.sql(f"select count(*) from raw.{table} where batch_id = {int(batch_id)}").collect()[0][0]


def load_types(
    spark,
    path: str | Path,
    fmt: str,
    *,
    replace: bool = False,
    skip_bad: bool = False,
    type_source: str | None = None,
) -> BatchSummary:
    """An entity-type table (extract.types formats) as one batch of raw.entity_types."""
    from extract import types as type_tables

    path, source = type_table_plan(path, fmt, type_source)
    batch = SparkBatch(spark, path, fmt, "types", replace, {"type_source": source, "skip_bad": skip_bad})
    bad = _BadLines() if skip_bad else None
    stats: dict = {}

    def write(batch_id: int) -> dict[str, int]:
        rows = ((e, t, source) for e, t in type_tables.read_type_rows(path, fmt, bad, stats))
        n = _load_rows(spark, batch_id, "entity_types", rows, batch.staging / str(batch_id))
        if n == 0:
            raise InputError(str(path), None, "no type rows in the file")
        entities = spark.sql(
            f"select count(distinct entity_id) from raw.entity_types where batch_id = {batch_id}"
        ).collect()[0][0]
        batch.summary.reader_stats = stats
        batch.summary.bad_lines = bad.messages if bad else []
        return {"rows": n, "typed_entities": entities, "bad_lines": bad.count if bad else 0}

    return batch.run(write)


def load_type_map(
    spark,
    path: str | Path,
    *,
    fmt: str = "figer_map",
    replace: bool = False,
    skip_bad: bool = False,
) -> BatchSummary:
    """A type map (``figer_map``) as one batch of raw.type_mappings."""
    from extract import types as type_tables

    if fmt != "figer_map":
        raise ValueError(f"unknown type-map format {fmt!r}; choose: figer_map")
    path = check_input_file(Path(path))
    batch = SparkBatch(spark, path, fmt, "type_map", replace, {"skip_bad": skip_bad})
    bad = _BadLines() if skip_bad else None

    def write(batch_id: int) -> dict[str, int]:
        rows = iter(type_tables.read_figer_map(path, bad))
        n = _load_rows(spark, batch_id, "type_mappings", rows, batch.staging / str(batch_id))
        if n == 0:
            raise InputError(str(path), None, "no mappings in the file")
        batch.summary.bad_lines = bad.messages if bad else []
        return {"rows": n, "bad_lines": bad.count if bad else 0}

    return batch.run(write)
