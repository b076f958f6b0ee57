"""The batch store on Spark: rows staged in the batch's partitions, one rewrite of the small
load_batches table publishes them (see :mod:`extract.batches.store`). pyspark is imported lazily: the
[spark] extra is needed on this engine only."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from datetime import UTC, datetime
from itertools import islice

from extract.batches.base import (
    COUNT_COLUMNS,
    COUNT_KEYS,
    BatchClaim,
    BatchStore,
    BatchSummary,
    BatchWriter,
    RemovedBatches,
    batches_not_found,
    changed_content_error,
    finish_summary,
    removal_names,
    skip_message,
)
from warehouse.spark_raw import apply_spark_schema

SPARK_CHUNK_ROWS = 200_000  # rows per DataFrame sent from the driver
# the Spark raw tables holding a batch's rows, per kind of batch (each partitioned by batch_id)
SPARK_BATCH_TABLES = {
    "corpus": ("documents", "sentences", "relation_instances", "entities", "entity_types", "path_rejections"),
    "types": ("entity_types",),
    "type_map": ("type_mappings",),
}
SPARK_BATCH_COLUMNS = (
    "batch_id source_file source_format kind checksum status n_documents n_sentences n_mentions n_instances "
    "n_rows n_bad_lines options started_at finished_at corpus_name"
).split()


class SparkBatchWriter(BatchWriter):
    """Inserts into the batch's partitions of the Spark raw tables (``spark`` for distributed writes;
    ``staging``: a folder (path or URI) of this batch for Parquet written from the driver, where every
    executor reaches it)."""

    def __init__(self, spark, summary: BatchSummary, staging: str):
        super().__init__(summary)
        self.spark, self.staging = spark, staging
        self.writes = 0  # write_rows calls: each stages its rows in a folder of its own

    def columns(self, table: str):
        """raw.<table>'s schema without the partition column."""
        from pyspark.sql.types import StructType  # the [spark] extra: only on this engine

        fields = [f for f in self.spark.table(f"raw.{table}").schema.fields if f.name != "batch_id"]
        return StructType(fields)

    def insert(self, table: str, data) -> None:
        """Append rows (an RDD or a list of tuples in the table's column order without batch_id)."""
        view = f"_load_{table}"
        self.spark.createDataFrame(data, self.columns(table)).createOrReplaceTempView(view)
        self.spark.sql(
            f"insert into raw.{table} partition (batch_id = {int(self.batch_id)}) select * from {view}"
        )

    def write_rows(
        self, table: str, columns: Sequence[str], rows: Iterable[tuple], *, distinct: bool = False
    ) -> int:
        schema = self.columns(table)
        if list(columns) != schema.names:
            raise ValueError(f"raw.{table} takes the columns {schema.names}, not {list(columns)}")
        self.writes += 1
        folder = f"{self.staging}/{table}.{self.writes}"
        rows, staged = iter(rows), False
        while part := list(islice(rows, SPARK_CHUNK_ROWS)):
            # written by the executors' tasks: the folder must be one they all reach (staging_dir below)
            self.spark.createDataFrame(part, schema).write.mode("append").parquet(folder)
            staged = True
        if not staged:
            return 0
        frame = self.spark.read.schema(schema).parquet(folder)
        frame = frame.distinct() if distinct else frame
        written = frame.count()
        frame.createOrReplaceTempView(f"_load_{table}")
        self.spark.sql(
            f"insert into raw.{table} partition (batch_id = {int(self.batch_id)}) select * from _load_{table}"
        )
        return written

    def count(self, table: str, expression: str = "count(*)") -> int:
        query = f"select {expression} from raw.{table} where batch_id = {int(self.batch_id)}"
        return int(self.spark.sql(query).collect()[0][0])

    def corpus_document_ids(self, corpus: str) -> set[str]:
        rows = self.spark.sql(self._corpus_documents("d.document_id", ""), {"corpus": corpus})
        return {row[0] for row in rows.toLocalIterator()}

    def document_origin(self, corpus: str, document_id: str) -> str:
        query = self._corpus_documents(
            "b.source_file, d.line_number, b.batch_id", "and d.document_id = :document limit 1"
        )
        rows = self.spark.sql(query, {"corpus": corpus, "document": document_id}).collect()
        return f"{rows[0][0]}:{rows[0][1]} (batch {rows[0][2]})" if rows else "a loaded batch"

    def _corpus_documents(self, columns: str, where: str) -> str:
        """The documents of the corpus's loaded batches, but those this batch replaces (published with
        it: until then they are still loaded)."""
        replaced = ", ".join(str(int(b)) for b in self.summary.replaced_batches)
        return (
            f"select {columns} from raw.documents d join raw.load_batches b on d.batch_id = b.batch_id "
            "where b.kind = 'corpus' and b.status = 'loaded' and b.corpus_name = :corpus "
            + (f"and b.batch_id not in ({replaced}) " if replaced else "")
            + where
        )


class SparkBatchStore(BatchStore):
    """load_batches on the Spark catalog: a small table, read whole and rewritten whole on each change."""

    def __init__(self, spark, staging: str):
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
        replace = claim.replace
        existing = [
            r
            for r in loaded
            if r["checksum"] in claim.checksums
            or (replace and claim.by_path and r["source_file"] == claim.source)
        ]
        if claim.supersede and not existing:
            existing = [r for r in loaded if r["source_file"] == claim.source]
            replace = bool(existing)
        batch_id = max((r["batch_id"] for r in rows), default=0) + 1
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
        if not existing and not replace and not claim.supersede and claim.by_path:
            changed = [r for r in loaded if r["source_file"] == claim.source]
            if changed:  # refused, recorded as a failed batch as on Postgres
                error = changed_content_error(claim, changed[0]["batch_id"])
                self._fail(claim, rows, row, str(error))
                raise error
        if existing and not replace:
            old = existing[0]
            summary.batch_id, summary.corpus_name, summary.skipped = old["batch_id"], old["corpus_name"], True
            summary.message = skip_message(
                claim, old["batch_id"], json.loads(old["options"] or "{}"), old["corpus_name"]
            )
            return summary
        summary.batch_id = batch_id
        self._write([*rows, row])
        replaced = [old["batch_id"] for old in existing]
        staging = f"{self.staging}/{batch_id}"
        try:
            summary.replaced_batches = replaced  # still loaded while this one is written
            counts = write(SparkBatchWriter(self.spark, summary, staging))
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
            with suppress(Exception):  # a failed clean-up must not hide the load's own error
                remove_dir(self.spark, staging)
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
                recorded = ("error", "type_source", "parser", "bad_line_numbers")
                rows.append({**row, **{key: options.get(key) for key in recorded}})
        return rows

    def remove(
        self, *, batch_ids: Iterable[int] = (), corpora: Iterable[str] = (), missing_ok: bool = False
    ) -> RemovedBatches:
        """Unknown names are refused before anything changes; then one rewrite of load_batches
        unpublishes the batches and their partitions are dropped (a crash in between leaves only
        unreferenced partitions, which no model reads)."""
        batch_ids, corpora = removal_names(batch_ids, corpora)
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


STAGING = "_staging"  # the loaders' staging folder inside the warehouse folder


def staging_dir(spark) -> str:
    """Where a load stages the rows it sends from the driver: in the session's warehouse folder, which
    every executor reaches (a URI on a cluster), never on the driver's own disk."""
    return f"{spark.conf.get('spark.sql.warehouse.dir').rstrip('/')}/{STAGING}"


def remove_dir(spark, location: str) -> None:
    """Delete a folder (a path or a URI) through Hadoop's file system, wherever it lives."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(path, True)
