"""The reader protocol: what the loader needs to know about a corpus format.

Two kinds of readers:

- :class:`CorpusReader`: documents with linked mentions (character offsets), parsed by spaCy
  afterwards. ``alignment`` says what to do by default with offsets that cut through a token ("strict":
  an error; "expand": widen to whole tokens, for mentions found by string matching or given on another
  tokenisation; ``--alignment`` chooses for a load); ``needs_ner`` says that the mentions come from
  spaCy's NER (plain text).
- :class:`PreparsedReader`: the input brings its own dependency parses (CoNLL-U, parsed spaCy
  DocBins); the reader yields the extracted paths directly and spaCy does not run. A format that may
  or may not bring them (DocBin) is both kinds and says which for a file (``brings_parses``).

Readers take their options as constructor arguments; ``read`` yields documents with 1-based line
numbers and raises ``InputError(file, line, problem)`` for bad input unless ``on_error`` (the
loader's ``--skip-bad`` counter) takes it. ``stats`` counts reader-level events (e.g. mentions not
found) that the batch summary reports.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar, Literal

from deppath.records import Document, ExtractionResult
from files.reading import ErrorHandler


class CorpusReader(ABC):
    """A corpus format whose documents spaCy parses."""

    alignment: ClassVar[Literal["strict", "expand", "contract"]] = "strict"
    needs_ner: ClassVar[bool] = False

    @abstractmethod
    def read(
        self, path: Path, on_error: ErrorHandler = None, stats: Counter | None = None
    ) -> Iterator[Document]:
        """The file's documents, in file order."""


class PreparsedReader(ABC):
    """A corpus format that brings its own dependency parses."""

    def brings_parses(self, path: Path) -> bool:
        """Whether this file is read with its own parses (else it is read as a CorpusReader's)."""
        return True

    @abstractmethod
    def read_extracted(
        self,
        path: Path,
        on_error: ErrorHandler = None,
        stats: Counter | None = None,
        *,
        ner_types: bool = False,
        ner_mentions: bool = False,
    ) -> Iterator[tuple[Document, ExtractionResult]]:
        """Each document with the paths extracted from its own parses, in file order (counting them in
        ``stats["sentences_parsed"]``). ner_types, ner_mentions: the NER options, applied with the
        input's own NER labels where it has them."""
