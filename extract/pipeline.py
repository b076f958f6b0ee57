"""The extraction pipeline: documents → parsed with spaCy → NER options applied → SherLIiC paths.

One pipeline for every caller: the loaders (:mod:`extract.loading`), the demo's template check and the
extraction benchmark. With ``processes`` > 1 parsing and path extraction both run in worker processes
(tasks of TASK_DOCUMENTS documents) and only the small results travel back; results always come in
input order, and a bad document is raised (or handed to ``on_error``) when its turn comes.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import Literal

from deppath.extraction import extract_doc
from deppath.parsing import load_nlp
from deppath.records import Document, ExtractionResult
from extract.formats import ner
from warehouse.errors import InputError

SPACY_BATCH = 64  # documents per spaCy minibatch
TASK_DOCUMENTS = 256  # documents per worker task (processes > 1)

# One document's outcome: the document (with NER applied), its paths or its InputError, spaCy's
# sentence count.
_Outcome = tuple[Document, ExtractionResult | InputError, int]


@dataclass(frozen=True)
class Extraction:
    """How documents become paths; runs where the parsing runs (in each worker process with more than
    one process: this object goes to the workers with every task, each worker loads the model once,
    forked workers inherit the main process's copy).

    source: the input file named in errors. alignment: "strict" (mention offsets that cut through a
    token are an error) or "expand" (widened to whole tokens). ner_types: type linked mentions with
    spaCy's NER label (type_source ``ner``); ner_mentions: add NER entities no linked mention covers
    (:func:`extract.formats.ner.augment`).
    """

    source: str = "<input>"
    alignment: Literal["strict", "expand"] = "strict"
    ner_types: bool = False
    ner_mentions: bool = False

    def __post_init__(self) -> None:
        if self.alignment not in ("strict", "expand"):
            raise ValueError(f"alignment must be 'strict' or 'expand', not {self.alignment!r}")

    @property
    def uses_ner(self) -> bool:
        return self.ner_types or self.ner_mentions

    def outcomes(self, documents: Iterable[Document]) -> Iterator[_Outcome]:
        """The documents' outcomes, in order, from one ``nlp.pipe`` stream (one stream rather than a
        call per batch: the allocator keeps spaCy's batch memory instead of returning it to the
        system and faulting it in again, 10-15 % of the time with one call per 64 documents)."""
        nlp = load_nlp(ner=self.uses_ner)
        stream = ((d.text, d) for d in documents)
        for parsed, document in nlp.pipe(stream, as_tuples=True, batch_size=SPACY_BATCH):
            if self.uses_ner:
                document = ner.augment(
                    document, parsed, add_mentions=self.ner_mentions, type_mentions=self.ner_types
                )
            try:
                outcome: ExtractionResult | InputError = extract_doc(
                    parsed, document, source=self.source, expand=self.alignment == "expand"
                )
            except InputError as exc:
                outcome = exc
            yield document, outcome, sum(1 for _ in parsed.sents)

    def __call__(self, documents: list[Document]) -> list[_Outcome]:
        """One worker task."""
        return list(self.outcomes(documents))


def extract_documents(
    docs: Iterable[Document],
    extraction: Extraction | None = None,
    *,
    processes: int = 1,
    on_error: Callable[[InputError], None] | None = None,
    stats: Counter | None = None,
) -> Iterator[tuple[Document, ExtractionResult]]:
    """Parse once with spaCy (NER only when needed), apply NER options, extract paths per document.

    Results come in input order. A bad document goes to ``on_error`` or, without it, raises its
    InputError; a reader's InputError is raised after the results of the documents read before it.
    stats["sentences_parsed"] counts spaCy's sentences (raw.sentences keeps only those with kept paths).
    """
    extraction = extraction or Extraction()
    load_nlp(ner=extraction.uses_ner)  # fails early if the model is missing; forked workers inherit it
    stats = stats if stats is not None else Counter()
    feed = Feed(docs)
    if processes > 1:
        outcomes = _in_workers(extraction, feed, processes)
    else:
        outcomes = extraction.outcomes(feed)
    for document, outcome, sentences in outcomes:
        stats["sentences_parsed"] += sentences
        if isinstance(outcome, InputError):
            if on_error is None:
                raise outcome
            on_error(outcome)
            continue
        yield document, outcome
    if feed.error is not None:
        raise feed.error


class Feed:
    """The documents, ending at a reader's InputError, which is kept in ``error`` for the caller to raise
    after the results of the documents read before it (the parsing reads ahead)."""

    def __init__(self, docs: Iterable[Document]):
        self.docs = iter(docs)
        self.error: InputError | None = None

    def __iter__(self) -> Iterator[Document]:
        while self.error is None:
            try:
                yield next(self.docs)
            except StopIteration:
                return
            except InputError as exc:
                self.error = exc


def _in_workers(extraction: Extraction, documents: Iterable[Document], processes: int) -> Iterator[_Outcome]:
    """``extraction``'s outcomes computed by a pool of ``processes`` workers, in input order; tasks of
    TASK_DOCUMENTS documents, at most two per worker in flight (a large file is never read ahead whole)."""
    documents = iter(documents)
    tasks = iter(lambda: list(islice(documents, TASK_DOCUMENTS)), [])
    pool = ProcessPoolExecutor(processes)
    pending: deque[Future[list[_Outcome]]] = deque()
    try:
        for task in tasks:
            pending.append(pool.submit(extraction, task))
            if len(pending) >= 2 * processes:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()
    finally:  # also when the caller stops early (an error, a limit): drop the queued tasks
        pool.shutdown(cancel_futures=True)
