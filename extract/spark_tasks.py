"""What the distributed extraction's tasks run in Spark's Python workers (:mod:`extract.spark_load` builds
the jobs on the driver). Kept apart so that an executor imports only this module's light chain (the
pipeline, the row logic, deppath) and spaCy: the project's wheel, spaCy and its model are all a
cluster's workers need (``make spark-package``, docs/spark.md)."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator

from deppath.records import Document
from extract.corpus_rows import Tally, document_rows, entity_name, inline_type_rows
from extract.pipeline import Extraction
from warehouse.errors import InputError


def partition_records(
    extraction: Extraction | None, max_errors: int, index: int, items: Iterable[tuple]
) -> Iterator[tuple]:
    """One task: its documents' outcomes as tagged records.

    items: (document index in the file, Document) or, without an extraction (the reader brings its own
    parses), (document index, (Document, ExtractionResult)). Records: ("s", task, sentence#, document_id,
    line, sentence_index, text), ("i", task, instance#, sentence#, path, arg1, arg2, subject_side),
    ("n", entity, name, count), ("t", entity, source, type, count) and one ("p", task, summary), which keeps
    the first `max_errors` bad records."""
    positions: deque[int] = deque()

    def documents() -> Iterator[Document]:
        for position, document in items:
            positions.append(position)
            yield document

    if extraction is None:
        outcomes = ((document, result, 0) for document, result in documents())  # counted by the reader
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
            if len(errors) < max_errors:
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


def is_record(kind: str) -> Callable[[tuple], bool]:
    """A filter of the task records of one kind ("s", "i", "n", "t" or "p": see partition_records)."""
    return lambda record: record[0] == kind


def task_summary(record: tuple) -> tuple[int, dict]:
    """A ("p", task, summary) record as (task, summary)."""
    return record[1], record[2]


def sentence_row(sentence_first: dict, r: tuple) -> tuple:
    """A ("s", ...) record as a raw.sentences row, its id numbered after the previous tasks'."""
    return (sentence_first[r[1]] + r[2], *r[3:])


def instance_row(sentence_first: dict, instance_first: dict, r: tuple) -> tuple:
    """An ("i", ...) record as a raw.relation_instances row."""
    return (instance_first[r[1]] + r[2], sentence_first[r[1]] + r[3], *r[4:])


def add(a: int, b: int) -> int:
    return a + b


def name_count(r: tuple) -> tuple:
    """("n", entity, name, count) -> ((entity, name), count)"""
    return (r[1], r[2]), r[3]


def by_entity(kv: tuple) -> tuple:
    """((entity, name), count) -> (entity, (name, count))"""
    return kv[0][0], (kv[0][1], kv[1])


def chosen_name(kv: tuple) -> tuple:
    """(entity, [(name, count)]) -> a raw.entities row: the Postgres loader's choice of name."""
    return kv[0], entity_name(Counter(dict(kv[1])))


def type_count(r: tuple) -> tuple:
    """("t", entity, source, type, count) -> ((entity, source, type), count)"""
    return (r[1], r[2], r[3]), r[4]


def by_entity_source(kv: tuple) -> tuple:
    """((entity, source, type), count) -> ((entity, source), (type, count))"""
    return (kv[0][0], kv[0][1]), (kv[0][2], kv[1])


def chosen_types(kv: tuple) -> list[tuple]:
    """((entity, source), [(type, count)]) -> its inline raw.entity_types rows (the NER type chosen as
    by the Postgres loader)."""
    return inline_type_rows(kv[0][0], kv[0][1], Counter(dict(kv[1])))
