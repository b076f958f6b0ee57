"""Pre-parsed CoNLL-U with entity spans (`--format conllu`): no spaCy, your parser's trees are used.

Standard CoNLL-U (10 tab-separated columns, sentences separated by blank lines, ``#`` comments).
The dependency labels must be Stanford basic (e.g. Stanford CoreNLP ``basicDependencies``) or
ClearNLP (spaCy's English models); ClearNLP is converted to Stanford basic like spaCy parses
(deppath.labels). Universal Dependencies files (labels obj, obl, nsubj:pass, ...) are rejected:
the SherLIiC filters are defined on Stanford labels.

Entity mentions are given in the MISC column (10th) with BIO tags on the attribute ``Entity``::

    # sent_id = doc1-s1
    # text = Jeff Bezos founded Amazon .
    1  Jeff     Jeff     PROPN  NNP  _  2  compound  _  Entity=B-Q312556
    2  Bezos    Bezos    PROPN  NNP  _  3  nsubj     _  Entity=I-Q312556
    3  founded  found    VERB   VBD  _  0  ROOT      _  _
    4  Amazon   Amazon   PROPN  NNP  _  3  dobj      _  Entity=B-Q3884|SpaceAfter=No
    5  .        .        PUNCT  .    _  3  punct     _  _

``Entity=B-<id>`` starts a mention of entity ``<id>``, ``Entity=I-<id>`` (same id) continues it; any
other token ends it. An ``I-`` without a matching ``B-`` is an error. Each sentence is one
document (id = ``# sent_id`` or ``<file name>:<line>``; line = the sentence's first line). The
entity name is the mention's text (forms joined as in the sentence text). Every token's chain of heads
must reach a root (HEAD 0): a tree with a cycle is refused, naming the line of a token on it. A sentence
repeated verbatim is read once (reader stat ``repeated_records``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from deppath.extraction import extract_pairs
from deppath.labels import check_label_set
from deppath.paths import DepSentence
from deppath.records import Document, ExtractionResult, Mention
from extract.formats.base import PreparsedReader
from files.reading import ErrorHandler, nfc, read_lines, report
from warehouse.errors import InputError


def _blocks(path: Path, on_error: ErrorHandler) -> Iterator[tuple[int, list[str]]]:
    block: list[str] = []
    first = 0
    for number, line in read_lines(path, on_error):
        if line.strip():
            if not block:
                first = number
            block.append(line)
        elif block:
            yield first, block
            block = []
    if block:
        yield first, block


def _mentions(block: list[str], first: int, path: Path) -> list[tuple[int, int, str]]:
    """(first token, last token, entity id) spans from the MISC Entity= BIO tags (0-based tokens)."""
    spans: list[tuple[int, int, str]] = []
    current: list | None = None
    index = -1
    for offset, line in enumerate(block):
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 10 or "-" in cols[0] or "." in cols[0]:
            continue
        index += 1
        tag = next((a[len("Entity=") :] for a in cols[9].split("|") if a.startswith("Entity=")), None)
        if tag is None or tag == "O":
            current = None
            continue
        kind, _, entity = tag.partition("-")
        entity = nfc(entity)
        if kind not in ("B", "I") or not entity:
            raise InputError(str(path), first + offset, f"MISC Entity={tag!r} must be B-<id>, I-<id> or O")
        if kind == "I":
            if current is None or current[2] != entity:
                raise InputError(
                    str(path), first + offset, f"Entity=I-{entity} does not continue a B-{entity}"
                )
            current[1] = index
            continue
        current = [index, index, entity]
        spans.append(current)  # type: ignore[arg-type]
    return [tuple(s) for s in spans]  # type: ignore[misc]


def _cycle(heads: list[int]) -> list[int] | None:
    """The tokens (0-based) of a cycle in the heads (-1 = root), in head order, or None for a tree (or a
    forest: several roots are allowed, their pairs have no path)."""
    state = [0] * len(heads)  # 0 unseen, 1 on the current walk, 2 reaches a root
    for start in range(len(heads)):
        walk: list[int] = []
        token = start
        while token >= 0 and state[token] == 0:
            state[token] = 1
            walk.append(token)
            token = heads[token]
        if token >= 0 and state[token] == 1:  # came back to the walk: a cycle
            return walk[walk.index(token) :]
        for seen in walk:
            state[seen] = 2
    return None


def _token_lines(block: list[str], first: int) -> list[int]:
    """The file line of each token (not comments, ranges or empty nodes) of a sentence block."""
    lines = []
    for offset, line in enumerate(block):
        cols = line.split("\t")
        if not line.startswith("#") and len(cols) == 10 and "-" not in cols[0] and "." not in cols[0]:
            lines.append(first + offset)
    return lines


def extract_sentence(dep: DepSentence, spans: list[tuple[int, int, str]]) -> ExtractionResult:
    """Path instances between every pair of distinct-entity mentions (same rules as deppath.parsing)."""
    result = ExtractionResult()
    extract_pairs(dep.stanford, spans, result)
    return result


class _Fatal(Exception):
    def __init__(self, error: InputError):
        self.error = error


class ConlluReader(PreparsedReader):
    """Pre-parsed CoNLL-U with entity spans (`--format conllu`): no spaCy, your parser's trees are used."""

    def read_extracted(
        self,
        path: Path,
        on_error: ErrorHandler = None,
        stats: Counter | None = None,
        *,
        ner_types: bool = False,
        ner_mentions: bool = False,
    ) -> Iterator[tuple[Document, ExtractionResult]]:
        """CoNLL-U has no NER labels: the NER options do not apply."""
        path = Path(path)
        stats = stats if stats is not None else Counter()
        seen: set[bytes] = set()
        for first, block in _blocks(path, on_error):
            digest = hashlib.blake2b("\n".join(line.rstrip() for line in block).encode(), digest_size=16)
            if digest.digest() in seen:
                stats["repeated_records"] += 1
                continue
            seen.add(digest.digest())
            try:
                labels = [
                    c[7]
                    for c in (line.split("\t") for line in block if not line.startswith("#"))
                    if len(c) == 10
                ]
                ud = check_label_set(labels)
                if ud is not None:
                    # Fatal even with skip_bad: every sentence of such a file would be wrong.
                    raise _Fatal(
                        InputError(
                            str(path),
                            first,
                            f"dependency label {ud!r} is Universal Dependencies; "
                            "this format needs Stanford basic or "
                            "ClearNLP labels (e.g. Stanford CoreNLP basic dependencies "
                            "or spaCy's English models)",
                        )
                    )
                try:
                    dep = DepSentence.from_conllu(block)
                except ValueError as exc:
                    raise InputError(str(path), first, f"bad CoNLL-U sentence: {exc}") from None
                cycle = _cycle(dep.heads())
                if cycle is not None:
                    raise InputError(
                        str(path),
                        _token_lines(block, first)[cycle[0]],
                        "bad CoNLL-U sentence: the heads of tokens "
                        + " → ".join(str(t + 1) for t in [*cycle, cycle[0]])
                        + " form a cycle (every token's heads must lead to a root, HEAD 0)",
                    )
                spans = _mentions(block, first, path)
                sent_id = next(
                    (
                        line.partition("=")[2].strip()
                        for line in block
                        if line.startswith("#") and line[1:].partition("=")[0].strip() == "sent_id"
                    ),
                    None,
                )
                if sent_id == "":
                    raise InputError(str(path), first, "'# sent_id' is empty")
                mentions = tuple(
                    Mention(
                        dep.tokens[f].start,
                        dep.tokens[last].end,
                        entity,
                        dep.text[dep.tokens[f].start : dep.tokens[last].end],
                    )
                    for f, last, entity in spans
                )
                document = Document(sent_id or f"{path.name}:{first}", dep.text, mentions, first)
                result = extract_sentence(dep, spans)
                stats["sentences_parsed"] += 1  # the sentences of the file's own parses
                yield document, result
            except _Fatal as fatal:
                raise fatal.error from None
            except InputError as exc:
                report(exc, on_error)

    def read(
        self, path: Path, on_error: ErrorHandler = None, stats: Counter | None = None
    ) -> Iterator[Document]:
        """The documents only (mentions from the Entity tags), e.g. to inspect a file."""
        for document, _ in self.read_extracted(path, on_error=on_error, stats=stats):
            yield document
