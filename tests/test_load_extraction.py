"""The loader's extraction loop (extract.pipeline, real spaCy): the same outcomes with one process
and with worker processes — results, NER augment, sentence counts, bad documents skipped or raised in
input order with the same messages, a reader's error raised after the documents read before it."""

from __future__ import annotations

import pickle
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from deppath.records import Document, ExtractionResult, Mention
from extract import pipeline
from extract.pipeline import Extraction, extract_documents
from warehouse.errors import InputError

SOURCE = Path("corpus.jsonl")


def _doc(line: int, text: str, *names: str) -> Document:
    mentions = []
    for name in names:
        at = text.index(name)
        mentions.append(Mention(at, at + len(name), name.replace(" ", "_"), name))
    return Document(f"d{line}", text, tuple(mentions), line)


GOOD = [
    _doc(1, "Barack Obama met Angela Merkel in Berlin.", "Barack Obama", "Angela Merkel"),
    _doc(2, "Amazon was founded by Jeff Bezos. Bezos later left Amazon.", "Amazon", "Jeff Bezos"),
    _doc(3, "Ada Lovelace worked with Charles Babbage in London.", "Ada Lovelace", "Charles Babbage"),
    _doc(4, "Microsoft acquired GitHub in 2018.", "Microsoft", "GitHub"),
    _doc(5, "Marie Curie studied in Paris.", "Marie Curie"),
]
# Offsets that cut through a token ("Bo|b"): an InputError for this strict format.
MISALIGNED = Document("bad", "Bob met Ann.", (Mention(0, 2, "a"), Mention(8, 11, "b")), 6)


@pytest.fixture(autouse=True)
def _small_tasks(monkeypatch):
    monkeypatch.setattr(pipeline, "TASK_DOCUMENTS", 2)  # several tasks, so both workers and ordering count


def _run(
    docs, processes: int, *, skip_bad: bool = False, ner: bool = False
) -> tuple[list[tuple[Document, ExtractionResult]], list[str], Counter]:
    bad: list[str] = []
    stats: Counter = Counter()
    results = list(
        extract_documents(
            docs,
            Extraction(source=str(SOURCE), ner_types=ner, ner_mentions=ner),
            processes=processes,
            on_error=(lambda e: bad.append(str(e))) if skip_bad else None,
            stats=stats,
        )
    )
    return results, bad, stats


@pytest.mark.parametrize("ner", [False, True])
def test_two_processes_give_the_same_outcomes(ner):
    docs = GOOD[:3] + [MISALIGNED] + GOOD[3:]
    one = _run(docs, 1, skip_bad=True, ner=ner)
    two = _run(docs, 2, skip_bad=True, ner=ner)
    assert one == two
    results, bad, stats = one
    assert [d.document_id for d, _ in results] == ["d1", "d2", "d3", "d4", "d5"]
    paths = [(i.path, i.arg1_entity_id, i.arg2_entity_id) for _, r in results for i in r.instances]
    assert ("nsubjpass^-___found___prep___by___pobj", "Amazon", "Jeff_Bezos") in paths
    assert stats["sentences_parsed"] == 7  # the bad document was parsed too
    assert len(bad) == 1 and bad[0].startswith(f"{SOURCE}:6: ") and "token boundaries" in bad[0]
    if ner:  # NER types the linked mentions and adds Berlin, London, Paris
        assert results[0][0].type_source == "ner" and len(results[0][0].mentions) == 3


@pytest.mark.parametrize("processes", [1, 2])
def test_a_bad_document_raises_its_error(processes):
    before = set(psutil.Process().children())
    with pytest.raises(InputError) as err:
        _run(GOOD[:3] + [MISALIGNED] + GOOD[3:], processes)
    assert (err.value.file, err.value.line) == (str(SOURCE), 6)
    assert "token boundaries" in err.value.problem
    # the workers are gone when the error arrives (the traceback still holds the loop's frames), not
    # whenever the garbage collector finalises the pool, in whatever thread that happens to be
    assert set(psutil.Process().children()) == before


@pytest.mark.parametrize("processes", [1, 2])
def test_a_reader_error_comes_after_the_documents_read_before_it(processes):
    def documents() -> Iterator[Document]:
        yield from GOOD[:3]
        raise InputError(str(SOURCE), 4, "malformed JSON")

    seen: list[str] = []
    with pytest.raises(InputError, match="malformed JSON") as err:
        for document, _ in extract_documents(
            documents(), Extraction(source=str(SOURCE)), processes=processes
        ):
            seen.append(document.document_id)
    assert err.value.line == 4 and seen == ["d1", "d2", "d3"]


def test_input_errors_survive_pickling():  # workers send them back as outcomes
    error = pickle.loads(pickle.dumps(InputError("f.jsonl", 3, "bad offsets")))
    assert (error.file, error.line, error.problem, str(error)) == (
        "f.jsonl",
        3,
        "bad offsets",
        "f.jsonl:3: bad offsets",
    )
