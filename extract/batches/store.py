"""The one batch store: the lifecycle of ``raw.load_batches`` on either engine, written once.

Every load of the project (corpora, type tables, type maps, benchmark files, synthetic graphs) is one
batch: a ``raw.load_batches`` row plus the rows it owns in other raw tables (their ``batch_id``).

    claim (by content hash) -> loading -> loaded | failed;   list;   remove

- A :class:`BatchClaim` says what is loaded: source, format, kind, content checksum (a text file's
  ignores its layout, :func:`text_checksum`), options, corpus.
  The same content (kind + format + checksum) already loaded -> nothing is written, the summary says
  ``skipped``; ``replace`` deletes the old batch (and, with ``by_path``, any batch of the same kind and
  format from the same source) and loads again; other content at a source already loaded is refused
  unless replacing (loading it as a new batch would store its unchanged records twice).
- The loader's ``write(writer)`` writes the rows through a :class:`BatchWriter` and returns counts
  (and fills in ``writer.summary``: rejections, reader stats, bad-record messages, timings); an
  exception anywhere rolls the batch back (nothing half-loaded) and a ``failed`` row with the message
  is recorded apart (it owns no rows).
- Postgres (:class:`PostgresBatchStore`): one transaction per batch; two loads of the same content or
  source serialise on transaction-level advisory locks, so the second sees the first's batch and skips.
- Spark (:class:`SparkBatchStore`): rows are written into the batch's partitions while its row says
  ``loading`` (dbt reads ``loaded`` batches only); one rewrite of the small load_batches table publishes
  it. A crashed load's ``loading`` row is turned into ``failed`` (its partitions dropped) by the next
  load. The embedded Derby metastore admits one process at a time.

Nothing else writes ``raw.load_batches``. Identifiers never come from user input; values are bound
parameters or COPY data.

This module is the way in (:func:`open_batch_store` and every public name); the shared pieces live in
:mod:`extract.batches.base`, each engine's in :mod:`extract.batches.postgres` and
:mod:`extract.batches.spark`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from extract.batches.base import (
    MAX_KEPT_ERRORS,
    BatchClaim,
    BatchStore,
    BatchSummary,
    BatchWriter,
    RemovedBatches,
    file_checksum,
    text_checksum,
)
from extract.batches.postgres import PostgresBatchStore, PostgresBatchWriter, lock_key
from extract.batches.spark import SparkBatchStore, SparkBatchWriter, staging_dir
from warehouse.target import Target

__all__ = [
    "MAX_KEPT_ERRORS",
    "BatchClaim",
    "BatchStore",
    "BatchSummary",
    "BatchWriter",
    "PostgresBatchStore",
    "PostgresBatchWriter",
    "RemovedBatches",
    "SparkBatchStore",
    "SparkBatchWriter",
    "file_checksum",
    "lock_key",
    "open_batch_store",
    "text_checksum",
]


@contextmanager
def open_batch_store(target: Target) -> Iterator[BatchStore]:
    """The batch store of the Target's raw schema (on Spark the session stays for the process's next
    loads; the command that started it ends with it)."""
    if target.engine == "spark":
        spark = target.spark_session("sherliic-load")
        yield SparkBatchStore(spark, staging_dir(spark))
        return
    yield PostgresBatchStore(target)
