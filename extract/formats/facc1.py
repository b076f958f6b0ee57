"""FACC1-style entity annotations plus document texts (`--format facc1`).

The annotation file is the published FACC1 TSV (Gabrilovich, Ringgaard & Subramanya 2013, "FACC1:
Freebase annotation of ClueWeb corpora"), one mention per line, tab-separated::

    clueweb09-en0000-00-00000  UTF-8  Ohio  21089  21093  0.99763662  6.7055225e-08  /m/05kkh

columns: document id, document encoding, mention text, begin byte offset, end byte offset
(exclusive), posterior of the mention given its context, [posterior of the entity given the
mention — present in both official releases; a 7-column variant with one posterior is accepted],
Freebase MID (last column). Lines of one document are consecutive.

FACC1 ships no text. The document text is read from ``<docs_dir>/<document id>`` or
``<docs_dir>/<document id>.txt`` (docs_dir defaults to the annotation file's folder), as bytes in
the encoding named on the line; offsets are BYTE offsets into that file and are converted to
character offsets. The bytes at the offsets must decode to the mention text, otherwise the line
is rejected (wrong offsets or wrong document). Optional ``min_posterior``: drop mentions whose last
posterior is below it. Entity names are the mention texts of the first mention of each entity.
"""

from __future__ import annotations

import codecs
import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from deppath.records import Document, Mention
from extract.formats.base import CorpusReader
from files.reading import ErrorHandler, read_lines, report
from warehouse.errors import InputError


def _document_bytes(docs_dir: Path, doc_id: str, path: Path, line: int) -> bytes:
    if "/" in doc_id or doc_id.startswith("."):
        raise InputError(str(path), line, f"document id {doc_id!r} is not a plain file name")
    for candidate in (docs_dir / doc_id, docs_dir / f"{doc_id}.txt"):
        if candidate.is_file():
            try:
                return candidate.read_bytes()
            except OSError as exc:
                raise InputError(str(path), line, f"cannot read {candidate}: {exc.strerror}") from None
    raise InputError(
        str(path),
        line,
        f"text of document {doc_id!r} not found in {docs_dir} (expected {doc_id} or {doc_id}.txt)",
    )


class FACC1Reader(CorpusReader):
    """FACC1-style entity annotations plus document texts (`--format facc1`)."""

    alignment = "expand"

    def __init__(self, *, docs_dir: str | Path | None = None, min_posterior: float = 0.0):
        if not math.isfinite(min_posterior):
            raise ValueError(f"min_posterior must be a finite number, not {min_posterior}")
        self.docs_dir = docs_dir
        self.min_posterior = min_posterior

    def read(
        self, path: Path, on_error: ErrorHandler = None, stats: Counter | None = None
    ) -> Iterator[Document]:
        docs_dir = self.docs_dir
        min_posterior = self.min_posterior
        path = Path(path)
        docs_dir = Path(docs_dir) if docs_dir else path.parent
        current: str | None = None
        first_line = 0
        raw = b""
        text = ""
        encoding = "utf-8"
        mentions: list[Mention] = []
        names: dict[str, str] = {}

        def flush() -> Document | None:
            if current is None:
                return None
            return Document(current, text, tuple(sorted(mentions, key=lambda m: m.start)), first_line)

        for line, content in read_lines(path, on_error):
            if not content.strip() or content.startswith("#"):
                continue
            cols = content.split("\t")
            try:
                if len(cols) not in (7, 8):
                    raise InputError(
                        str(path),
                        line,
                        f"expected 8 tab-separated columns (7 with one posterior), got {len(cols)}",
                    )
                doc_id, enc, surface, begin, end = cols[:5]
                mid = cols[-1]
                try:
                    b, e = int(begin), int(end)
                    posterior = float(cols[-2])
                except ValueError:
                    posterior = math.nan
                if not math.isfinite(posterior):
                    raise InputError(
                        str(path), line, "byte offsets must be integers and posteriors finite numbers"
                    )
                if doc_id != current:
                    doc = flush()
                    if doc is not None:
                        yield doc
                    current, first_line, mentions = doc_id, line, []
                    try:
                        encoding = codecs.lookup(enc).name
                        # LookupError for a codec that does not make text (rot13, base64); b"" is not checked
                        b"\0\0\0\0".decode(encoding, "ignore")
                    except LookupError:
                        current = None
                        raise InputError(str(path), line, f"unknown text encoding {enc!r}") from None
                    raw = _document_bytes(docs_dir, doc_id, path, line)
                    try:
                        text = raw.decode(encoding)
                    except UnicodeDecodeError as exc:
                        current = None
                        raise InputError(
                            str(path), line, f"document {doc_id!r} is not valid {enc} (byte {exc.start})"
                        ) from None
                if not (0 <= b < e <= len(raw)):
                    raise InputError(
                        str(path),
                        line,
                        f"byte offsets [{b}, {e}) outside document {doc_id!r} ({len(raw)} bytes)",
                    )
                try:
                    covered = raw[b:e].decode(encoding)
                except UnicodeDecodeError:
                    raise InputError(str(path), line, f"byte offsets [{b}, {e}) split a character") from None
                if covered != surface:
                    raise InputError(
                        str(path),
                        line,
                        f"bytes [{b}, {e}) of {doc_id!r} read {covered!r}, not the mention {surface!r}",
                    )
                if posterior < min_posterior:
                    continue
                start = len(raw[:b].decode(encoding))
                names.setdefault(mid, surface)
                mentions.append(Mention(start, start + len(covered), mid, names[mid]))
            except InputError as exc:
                report(exc, on_error)
        doc = flush()
        if doc is not None:
            yield doc
