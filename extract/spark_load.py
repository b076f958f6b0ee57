"""A corpus batch's rows on Spark: the distributed extraction (:mod:`extract.loading` runs it through
the batch store when the Target's engine is Spark).

The same pipeline as on Postgres, run as Spark jobs:

- the reader (:meth:`extract.load_plan.CorpusPlan.items`) runs on the driver and the documents go to
  the cluster in chunks (`sc.parallelize`, TASK_DOCUMENTS documents per task); reading is ~1 % of the
  extraction cost, so the driver keeps the executors busy up to a few hundred cores (a corpus split
  into many files can also be loaded by several drivers one after the other, one batch per file);
- each task calls :meth:`extract.pipeline.Extraction.outcomes` on its documents (one spaCy model per
  Python worker: ``load_nlp`` is cached and Spark reuses its Python workers) and turns the results into
  rows with :mod:`extract.corpus_rows`, the row logic the Postgres loader uses too;
- one Spark job per chunk runs the extraction; the chunks' records stay cached (memory and disk) until
  the file is done, then each table's rows go into the batch's partition in one job (the Spark raw
  tables are partitioned by ``batch_id``, warehouse/schema/spark/raw.sql); sentence and instance ids
  are dense and follow the input order like Postgres' identity columns.

The batch's lifecycle (skip, replace, publish, a 'failed' row, a crashed load cleaned up) is the batch
store's (:mod:`extract.batches.store`). A bad record found in a task fails the batch with the first
one's ``file:line: problem``, or is counted with ``skip_bad``. pyspark is imported lazily (the [spark]
extra is needed on this engine only).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from itertools import islice

from extract.batches.store import MAX_KEPT_ERRORS, SparkBatchWriter
from extract.load_plan import CorpusPlan
from extract.pipeline import TASK_DOCUMENTS, Feed
from extract.spark_tasks import (
    add,
    by_entity,
    by_entity_source,
    chosen_name,
    chosen_types,
    instance_row,
    is_record,
    name_count,
    partition_records,
    sentence_row,
    task_summary,
    type_count,
)
from warehouse.errors import InputError
from warehouse.target import Target

TASKS_PER_CORE = 4  # tasks of a chunk per core: stragglers matter less, the driver reads less often
SPARK_APP = "sherliic-load"


# -- the loader's write -------------------------------------------------------------------------------
def parallelism(target: Target) -> int:
    """The default parallelism of the Target's Spark session (recorded in a corpus batch's options)."""
    return target.spark_session(SPARK_APP).sparkContext.defaultParallelism


def corpus_writer(
    plan: CorpusPlan, progress: Callable[[int], None] | None
) -> Callable[[SparkBatchWriter], dict[str, int]]:
    """The batch store's ``write`` of a corpus file on Spark: read on the driver, extract on the
    cluster, write the rows into the batch's partitions, fill the summary; returns the counts."""

    def write(writer: SparkBatchWriter) -> dict[str, int]:
        from pyspark import StorageLevel  # the [spark] extra: only on this engine

        spark, summary, bad = writer.spark, writer.summary, plan.bad
        sc = spark.sparkContext
        # chunk: documents sent to the cluster per Spark job
        chunk = sc.defaultParallelism * TASKS_PER_CORE * TASK_DOCUMENTS
        ids = {
            "sentence": _next_id(spark, "sentences", "sentence_id"),
            "instance": _next_id(spark, "relation_instances", "instance_id"),
        }
        totals: Counter = Counter()
        rejections: Counter = Counter()
        errors: list[tuple[int, str, int | None, str]] = []
        # a reader's InputError is raised after the documents read before it, as on Postgres
        feed = Feed(plan.items(writer))
        items = enumerate(feed)
        started = time.perf_counter()
        chunks: list[_Chunk] = []
        try:
            while part := list(islice(items, chunk)):
                slices = max(1, min(len(part) // TASK_DOCUMENTS + 1, chunk // TASK_DOCUMENTS))
                records = (
                    sc.parallelize(part, slices)
                    .mapPartitionsWithIndex(partial(partition_records, plan.extraction, MAX_KEPT_ERRORS))
                    .persist(
                        StorageLevel.MEMORY_AND_DISK
                    )  # the extraction runs once; rows are written at the end
                )
                summaries = dict(records.filter(is_record("p")).map(task_summary).collect())
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
            summary.timings["extract_s"] = round(time.perf_counter() - started, 3)
            if totals["documents"] == 0:
                raise InputError(str(plan.path), None, "no documents in the file")
            writes_started = time.perf_counter()
            plan.write_documents(writer)
            _write_rows(writer, chunks)
            n_entities, n_type_rows, n_typed = _write_entities(writer, chunks)
            summary.timings["write_s"] = round(time.perf_counter() - writes_started, 3)
        finally:
            for part_chunk in chunks:
                part_chunk.records.unpersist()
        if bad is not None:  # reader errors (driver) first, then the tasks' in input order
            bad.messages = (bad.messages + [str(InputError(*e[1:])) for e in sorted(errors)])[
                :MAX_KEPT_ERRORS
            ]
            bad.lines += [line for _, _, line, _ in sorted(errors) if line is not None]
        rejection_rows = sorted(rejections.items())
        writer.insert("path_rejections", rejection_rows)
        plan.stats["sentences_parsed"] += totals.pop("sentences_parsed")
        plan.report(summary, totals["documents"], dict(rejection_rows))
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

    return write


def _next_id(spark, table: str, column: str) -> int:
    """The next free id of raw.<table> (ids are dense per batch, in input order)."""
    value = spark.sql(f"select max({column}) from raw.{table}").collect()[0][0]
    return (value or 0) + 1


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
        return self.records.filter(is_record("s")).map(partial(sentence_row, self.sentence_first))

    def instances(self):
        return self.records.filter(is_record("i")).map(
            partial(instance_row, self.sentence_first, self.instance_first)
        )


def _write_rows(writer: SparkBatchWriter, chunks: list[_Chunk]) -> None:
    """The batch's sentences and relation instances into its partitions, one Spark job per table."""
    sc = writer.spark.sparkContext
    writer.insert("sentences", sc.union([c.sentences() for c in chunks]))
    writer.insert("relation_instances", sc.union([c.instances() for c in chunks]))


def _write_entities(writer: SparkBatchWriter, chunks: list[_Chunk]) -> tuple[int, int, int]:
    """raw.entities and the inline raw.entity_types of the batch from the tasks' counts, with the
    Postgres loader's choice of name and NER type (extract.corpus_rows); (entities, type rows,
    typed entities)."""
    spark, batch_id = writer.spark, int(writer.batch_id)
    sc = spark.sparkContext
    names = sc.union([c.records.filter(is_record("n")) for c in chunks])
    entity_rows = names.map(name_count).reduceByKey(add).map(by_entity).groupByKey().map(chosen_name)
    writer.insert("entities", entity_rows)
    types = sc.union([c.records.filter(is_record("t")) for c in chunks])
    type_rows = (
        types.map(type_count).reduceByKey(add).map(by_entity_source).groupByKey().flatMap(chosen_types)
    )
    writer.insert("entity_types", type_rows)
    counts = spark.sql(
        f"select (select count(*) from raw.entities where batch_id = {batch_id}), count(*), "
        f"count(distinct entity_id) from raw.entity_types where batch_id = {batch_id}"
    ).collect()[0]
    return int(counts[0]), int(counts[1]), int(counts[2])
