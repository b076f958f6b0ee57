"""A corpus batch's rows on Postgres, inside the batch's transaction (:mod:`extract.loading` runs it
through the batch store).

The documents are parsed and extracted here (``processes`` worker processes, :mod:`extract.pipeline`)
and turned into rows by :mod:`extract.corpus_rows`, the row logic the Spark loader uses too. Sentences
and relation instances are COPYed into temporary tables, then inserted set-based with identity ids
drawn for the whole batch (the instances point at their sentences); entities, inline entity types
and rejection counts are COPYed into their tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import closing

import psycopg

from deppath.records import Document, ExtractionResult
from extract.batches.store import PostgresBatchWriter, lock_key
from extract.corpus_rows import Tally, document_rows
from extract.load_plan import BadLines, CorpusPlan
from extract.pipeline import extract_documents
from warehouse.errors import InputError

CHUNK_ROWS = 5000  # rows buffered before a COPY round trip


class Copier:
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


def corpus_writer(
    plan: CorpusPlan, processes: int, progress: Callable[[int], None] | None
) -> Callable[[PostgresBatchWriter], dict[str, int]]:
    """The batch store's ``write`` of a corpus file on Postgres: extract with `processes` processes,
    write the rows, fill the summary; returns the counts."""

    def write(writer: PostgresBatchWriter) -> dict[str, int]:
        items = plan.items(writer)
        if plan.extraction is None:
            results: Iterable = items
        else:
            results = extract_documents(
                items,
                plan.extraction,
                processes=processes,
                parent_only_fds=(writer.connection.fileno(),),  # no worker keeps this load's session
                on_error=plan.bad,
                stats=plan.stats,
            )
        with closing(results):  # an error or interrupt stops the workers at once
            counts, rejections = write_corpus(writer, results, plan.bad, progress)
        plan.write_documents(writer)
        check_unique_documents(writer, plan)
        plan.report(writer.summary, counts["documents"], rejections)
        return counts

    return write


def check_unique_documents(writer: PostgresBatchWriter, plan: CorpusPlan) -> None:
    """Refuse a document id that another load of the corpus committed while this one ran (the ids loaded
    before it started were checked while reading). Loads of one corpus take a lock for this last step,
    held until they commit, so two loads started together cannot both pass it."""
    conn = writer.connection
    conn.execute("select pg_advisory_xact_lock(%s)", (lock_key(f"sherliic-corpus:{plan.corpus}"),))
    row = conn.execute(
        "select d.document_id, d.line_number from raw.documents d "
        "join raw.documents o on o.document_id = d.document_id and o.batch_id <> d.batch_id "
        "join raw.load_batches b on b.batch_id = o.batch_id "
        "where d.batch_id = %s and b.kind = 'corpus' and b.status = 'loaded' and b.corpus_name = %s "
        "order by d.line_number limit 1",
        (writer.batch_id, plan.corpus),
    ).fetchone()
    if row is None:
        return
    document_id, line = row
    if plan.on_duplicate == "skip":  # the other load came first: this one is the later document
        where = writer.document_origin(plan.corpus, document_id)
        raise InputError(
            str(plan.path),
            line,
            f"document id {document_id!r} was loaded meanwhile by {where} (another load of corpus "
            f"{plan.corpus!r} running at the same time); nothing loaded — load the file again to skip it",
        )
    raise InputError(
        str(plan.path),
        line,
        f"document id {document_id!r} is already used by the document at "
        f"{writer.document_origin(plan.corpus, document_id)} of corpus {plan.corpus!r} (document ids are "
        "unique within a corpus; --on-duplicate skip keeps the first)",
    )


def write_corpus(
    writer: PostgresBatchWriter,
    results: Iterable[tuple[Document, ExtractionResult]],
    bad: BadLines | None,
    progress: Callable[[int], None] | None,
) -> tuple[dict, dict]:
    """Write the extraction results of one batch; (counts, rejections per rule)."""
    conn, batch_id = writer.connection, writer.batch_id
    conn.execute(
        "create temp table _load_sentences (local_id bigint, document_id text, line_number integer, "
        "sentence_index integer, text text) on commit drop"
    )
    conn.execute(
        "create temp table _load_instances (local_sentence bigint, path text, arg1 text, arg2 text, "
        "subject_side smallint) on commit drop"
    )
    sentences = Copier(conn, "copy _load_sentences from stdin")
    instances = Copier(conn, "copy _load_instances from stdin")
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
    n_entities = writer.write_rows("entities", ("entity_id", "entity_name"), tally.entity_rows())
    type_rows = tally.type_rows()
    writer.write_rows("entity_types", ("entity_id", "type_name", "type_source"), type_rows)
    rejections = dict(sorted(tally.rejections.items()))
    writer.write_rows("path_rejections", ("rule", "n_paths"), rejections.items())
    counts = {
        "documents": tally.documents,
        "sentences": sentences.total,
        "mentions": tally.mentions,
        "entities": n_entities,
        "entity_types": len(type_rows),
        "typed_entities": len({e for e, _, _ in type_rows}),
        "instances": instances.total,
        "rejected": sum(rejections.values()),
        "bad_lines": bad.count if bad else 0,
    }
    return counts, rejections
