"""The batch store on Postgres: one transaction per batch (see :mod:`extract.batches.store`)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack

import psycopg
from psycopg.rows import dict_row

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
from warehouse.errors import DatabaseUnavailable, InputError, Interrupted
from warehouse.interrupts import deferred
from warehouse.target import Target


class PostgresBatchWriter(BatchWriter):
    """COPY into the raw tables, inside the batch's transaction (``connection`` for set-based SQL)."""

    def __init__(self, connection: psycopg.Connection, summary: BatchSummary):
        super().__init__(summary)
        self.connection = connection

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

    def count(self, table: str, expression: str = "count(*)") -> int:
        query = f"select {expression} from raw.{table} where batch_id = %s"
        return int(self.connection.execute(query, (self.batch_id,)).fetchone()[0])

    def corpus_document_ids(self, corpus: str) -> set[str]:
        with self.connection.cursor(name="corpus_document_ids") as cursor:  # streamed, not fetched whole
            cursor.execute(_CORPUS_DOCUMENTS.format(columns="d.document_id", where=""), (corpus,))
            return {row[0] for row in cursor}

    def document_origin(self, corpus: str, document_id: str) -> str:
        query = _CORPUS_DOCUMENTS.format(
            columns="b.source_file, d.line_number, b.batch_id", where="and d.document_id = %s limit 1"
        )
        row = self.connection.execute(query, (corpus, document_id)).fetchone()
        return f"{row[0]}:{row[1]} (batch {row[2]})" if row else "a loaded batch"


# the documents of a corpus's loaded batches
_CORPUS_DOCUMENTS = (
    "select {columns} from raw.documents d join raw.load_batches b using (batch_id) "
    "where b.kind = 'corpus' and b.status = 'loaded' and b.corpus_name = %s {where}"
)


def lock_key(text: str) -> int:
    """A signed 64-bit advisory-lock key derived from a string (stable across processes)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


class PostgresBatchStore(BatchStore):
    """raw.load_batches of a Postgres database: a batch is one transaction."""

    def __init__(self, target: Target):
        self.target = target

    def load(self, claim: BatchClaim, write: Callable[[BatchWriter], dict[str, int]]) -> BatchSummary:
        started = time.perf_counter()
        summary = BatchSummary(None, claim.source, claim.fmt, claim.kind, corpus_name=claim.corpus)
        self.target.ensure_schema()
        committed = False
        try:
            with self.target.connect() as conn, ExitStack() as after_commit:
                with conn.transaction():
                    if self._claim(conn, claim, summary):
                        counts = write(PostgresBatchWriter(conn, summary))
                        options = finish_summary(summary, claim, counts)
                        conn.execute(
                            # clock_timestamp(): now() is the transaction's start, i.e. started_at
                            "update raw.load_batches set status = 'loaded', finished_at = clock_timestamp(), "
                            f"{', '.join(c + ' = %s' for c in COUNT_COLUMNS)}, options = %s "
                            "where batch_id = %s",
                            (*(counts.get(k, 0) for k in COUNT_KEYS), json.dumps(options), summary.batch_id),
                        )
                    # a stop signal from here on waits until the COMMIT is through: the batch is whole
                    after_commit.enter_context(deferred())
                committed = True
        except Interrupted as exc:
            if committed:
                done = "already loaded as" if summary.skipped else "loaded as"
                raise Interrupted(
                    exc.signum, f"{exc.name}: stopped after {claim.path} ({done} batch {summary.batch_id})"
                ) from None
            raise Interrupted(
                exc.signum, f"{exc.name}: stopped loading {claim.path}; nothing of it was kept (rolled back)"
            ) from None
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
        keys = {lock_key(f"sherliic-load:{claim.checksum}"), lock_key(f"sherliic-load:{claim.source}")}
        for key in sorted(keys):
            conn.execute("select pg_advisory_xact_lock(%s)", (key,))
        loaded = (
            "select batch_id, options, corpus_name from raw.load_batches where kind = %s "
            "and source_format = %s and status = 'loaded' "
        )
        replace = claim.replace
        existing = conn.execute(
            loaded + "and (checksum = any(%s) or (%s and source_file = %s)) order by batch_id",
            (claim.kind, claim.fmt, claim.checksums, replace and claim.by_path, claim.source),
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
                "options ->> 'error' as error, options ->> 'type_source' as type_source, "
                "options ->> 'parser' as parser, options -> 'bad_line_numbers' as bad_line_numbers "
                "from raw.load_batches "
                "where (%(corpus)s::text is null or corpus_name = %(corpus)s) "
                "and (%(kind)s::text is null or kind = %(kind)s) order by batch_id",
                {"corpus": corpus, "kind": kind},
            )
            return cur.fetchall()

    def remove(
        self, *, batch_ids: Iterable[int] = (), corpora: Iterable[str] = (), missing_ok: bool = False
    ) -> RemovedBatches:
        batch_ids, corpora = removal_names(batch_ids, corpora)
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
