"""Plain text (`--format text`): mentions from spaCy NER.

UTF-8 text. A document is a paragraph: consecutive non-blank lines, joined with single spaces
(blank lines separate documents; the line number is the paragraph's first line; the id is
``<file name>:<line>``). Mentions are the NER entities (found by the loader in its single spaCy
pass, extract.formats.ner) with labels PERSON, NORP, FAC, ORG, GPE, LOC, PRODUCT, EVENT,
WORK_OF_ART, LAW, LANGUAGE (dates, numbers and amounts are not entities). The entity id is the
normalised name (lower case, single spaces, no leading "the", no trailing "'s"), so "Amazon" in
two documents is one entity; its type is the NER label (type_source ``ner``; the loader keeps the
majority label per entity).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from deppath.records import Document
from extract.formats.base import CorpusReader
from files.reading import ErrorHandler, read_lines


class TextReader(CorpusReader):
    """Plain text (`--format text`): mentions from spaCy NER."""

    needs_ner = True  # mentions and their types come from spaCy's NER

    def read(
        self, path: Path, on_error: ErrorHandler = None, stats: Counter | None = None
    ) -> Iterator[Document]:
        path = Path(path)
        lines: list[str] = []
        first = 0
        for number, line in read_lines(path, on_error):
            if line.strip():
                if not lines:
                    first = number
                lines.append(line.strip())
            elif lines:
                yield Document(f"{path.name}:{first}", " ".join(lines), (), first, "ner")
                lines = []
        if lines:
            yield Document(f"{path.name}:{first}", " ".join(lines), (), first, "ner")
