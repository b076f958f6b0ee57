"""The extraction pipeline: documents → parsed with spaCy → NER options applied → SherLIiC paths.

One pipeline for every caller: the loaders (:mod:`extract.loading`), the demo's template check and the
extraction benchmark. With ``processes`` > 1 parsing and path extraction both run in worker processes
(:class:`WorkerPool`, tasks of TASK_DOCUMENTS documents) and only the small results travel back; results
always come in input order, and a bad document is raised (or handed to ``on_error``) when its turn comes.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Literal

from deppath.extraction import extract_doc
from deppath.parsing import MODEL, check_alignment, load_nlp
from deppath.records import Document, ExtractionResult
from extract.formats import ner
from warehouse.errors import InputError

if TYPE_CHECKING:
    from spacy.language import Language

SPACY_BATCH = 64  # documents per spaCy minibatch
TASK_DOCUMENTS = 256  # documents per worker task (processes > 1)
PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h): a signal the kernel sends when the parent dies

# One document's outcome: the document (with NER applied), its paths or its InputError, spaCy's
# sentence count.
_Outcome = tuple[Document, ExtractionResult | InputError, int]


@dataclass(frozen=True)
class Extraction:
    """How documents become paths; runs where the parsing runs (in each worker process with more than
    one process: this object goes to the workers with every task, each worker loads the model once,
    forked workers inherit the main process's copy).

    source: the input file named in errors. alignment: what mention offsets that cut through a token
    become: "strict" (an error), "expand" (widened to whole tokens) or "contract" (narrowed to the whole
    tokens inside; :data:`deppath.parsing.ALIGNMENTS`). ner_types: type linked mentions with
    spaCy's NER label (type_source ``ner``); ner_mentions: add NER entities no linked mention covers
    (:func:`extract.formats.ner.augment`). spacy_model: the spaCy pipeline that parses (a package name
    or a saved pipeline's folder, :func:`deppath.parsing.load_nlp`).
    """

    source: str = "<input>"
    alignment: Literal["strict", "expand", "contract"] = "strict"
    ner_types: bool = False
    ner_mentions: bool = False
    spacy_model: str = MODEL

    def __post_init__(self) -> None:
        check_alignment(self.alignment)

    @property
    def uses_ner(self) -> bool:
        return self.ner_types or self.ner_mentions

    def nlp(self) -> Language:
        """The spaCy pipeline that parses (loaded once per process)."""
        return load_nlp(ner=self.uses_ner, model=self.spacy_model)

    def outcomes(self, documents: Iterable[Document]) -> Iterator[_Outcome]:
        """The documents' outcomes, in order, from one ``nlp.pipe`` stream (one stream rather than a
        call per batch: the allocator keeps spaCy's batch memory instead of returning it to the
        system and faulting it in again, 10-15 % of the time with one call per 64 documents)."""
        nlp = self.nlp()
        stream = ((d.text, d) for d in documents)
        for parsed, document in nlp.pipe(stream, as_tuples=True, batch_size=SPACY_BATCH):
            if self.uses_ner:
                document = ner.augment(
                    document, parsed, add_mentions=self.ner_mentions, type_mentions=self.ner_types
                )
            try:
                outcome: ExtractionResult | InputError = extract_doc(
                    parsed, document, source=self.source, alignment=self.alignment
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
    parent_only_fds: Sequence[int] = (),
    on_error: Callable[[InputError], None] | None = None,
    stats: Counter | None = None,
) -> Iterator[tuple[Document, ExtractionResult]]:
    """Parse once with spaCy (NER only when needed), apply NER options, extract paths per document.

    Results come in input order. A bad document goes to ``on_error`` or, without it, raises its
    InputError; a reader's InputError is raised after the results of the documents read before it.
    stats["sentences_parsed"] counts spaCy's sentences (raw.sentences keeps only those with kept paths).
    processes > 1: a :class:`WorkerPool` for this call; parent_only_fds: descriptors its workers close
    first (the loader's database socket).
    """
    extraction = extraction or Extraction()
    extraction.nlp()  # fails early if the model is missing; forked workers inherit it
    stats = stats if stats is not None else Counter()
    feed = Feed(docs)
    if processes > 1:
        outcomes = _in_workers(extraction, feed, processes, parent_only_fds)
    else:
        outcomes = extraction.outcomes(feed)
    # leaving early (a bad document raised, the caller closing this generator) stops the workers now, in
    # this thread, not whenever the garbage collector finalises the pool
    with closing(outcomes):
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


def _in_workers(
    extraction: Extraction, documents: Iterable[Document], processes: int, parent_only_fds: Sequence[int]
) -> Iterator[_Outcome]:
    """``extraction``'s outcomes computed by a :class:`WorkerPool` of ``processes`` workers, in input
    order. Leaving early (an error, a limit, an interrupt, the caller closing the generator) kills the
    workers; the end of the documents lets them exit."""
    with WorkerPool(extraction, processes, parent_only_fds) as pool:
        yield from pool.outcomes(documents)


class WorkerPool:
    """``processes`` forked worker processes that parse and extract (a context manager).

    Forked: each worker inherits the main process's loaded spaCy model, and with it every open file
    descriptor. A worker holding the loader's database socket would keep the load's session (its open
    transaction and advisory locks) alive after the loader is killed, so each worker first closes
    ``parent_only_fds`` (the loader passes its connection's socket). Each worker also dies with the
    main process (Linux ``PR_SET_PDEATHSIG``: even a SIGKILLed loader leaves no orphan) and ignores
    SIGINT/SIGTERM: a Ctrl-C reaches the whole process group, and the main process decides (it aborts
    and kills its workers). Leaving the block with an exception kills the workers at once; leaving it
    normally lets them finish and exit. A worker that dies (killed, out of memory) fails the load with
    one line naming the documents it held.
    """

    def __init__(self, extraction: Extraction, processes: int, parent_only_fds: Sequence[int] = ()):
        self.extraction, self.processes = extraction, processes
        self._executor = ProcessPoolExecutor(
            processes,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_worker_start,
            initargs=(os.getpid(), tuple(parent_only_fds)),
        )

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        self.close(abort=exc_type is not None)

    def close(self, *, abort: bool = False) -> None:
        """Stop the workers: at once (``abort``: SIGKILL, their tasks are lost) or once idle."""
        if abort:
            # the executor's own table of its processes (no public way to stop a running task)
            for process in list((getattr(self._executor, "_processes", None) or {}).values()):
                process.kill()
        self._executor.shutdown(wait=True, cancel_futures=True)

    def outcomes(self, documents: Iterable[Document]) -> Iterator[_Outcome]:
        """The documents' outcomes in input order; tasks of TASK_DOCUMENTS documents, at most two per
        worker in flight (a large file is never read ahead whole)."""
        documents = iter(documents)
        tasks = iter(lambda: list(islice(documents, TASK_DOCUMENTS)), [])
        pending: deque[tuple[Future[list[_Outcome]], list[Document]]] = deque()
        task: list[Document] = []
        try:
            for task in tasks:
                pending.append((self._executor.submit(self.extraction, task), task))
                if len(pending) >= 2 * self.processes:
                    yield from pending[0][0].result()
                    pending.popleft()
            while pending:
                yield from pending[0][0].result()
                pending.popleft()
        except BrokenProcessPool:
            held = [document.line_number for _, t in pending for document in t] or [
                document.line_number for document in task
            ]
            raise InputError(
                self.extraction.source,
                None,
                f"a worker process died while extracting the documents of lines {min(held)}-{max(held)} "
                "(killed, or out of memory); nothing of this file was kept",
            ) from None


def _worker_start(parent: int, parent_only_fds: tuple[int, ...]) -> None:
    """A worker's first steps (see :class:`WorkerPool`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the main process died before the death signal was armed
        os._exit(1)
    for fd in parent_only_fds:
        try:
            os.close(fd)
        except OSError:
            pass  # already closed
