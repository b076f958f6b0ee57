"""Relation instances from one parsed document: the SherLIiC paths between its mentions (docs/design.md §3).

The passes, in order: align each mention to tokens (:func:`deppath.parsing.align_mention`), group the
mentions by sentence (a mention crossing a sentence boundary is counted and dropped), convert the
sentence to Stanford basic labels and re-head copulas (:mod:`deppath.paths`), repair mentions the parser
split, then for every pair of mentions of distinct entities take the shortest path between their head
tokens, filter it (Appendix A, :mod:`deppath.filters`) and store it in canonical orientation (subject on
the left). Rejections are counted per rule name, plus the non-path cases below.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from typing import TYPE_CHECKING

from deppath.filters import rejection_rule
from deppath.parsing import align_mention, parse_documents, token_span
from deppath.paths import DepSentence, canonical_path, doc_arrays, path_between, repair_mentions
from deppath.records import Document, ExtractionResult, Mention, PathInstance

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

# Rejection keys besides the seven filter rules (stable names; users see them in raw counts).
CROSSES_SENTENCE = "mention_crosses_sentence"  # a mention spanning a sentence boundary (dropped)
OVERLAPPING = "overlapping_mentions"  # a pair whose mentions overlap or share a head token
NO_PATH = "no_path"  # a pair with no dependency path (e.g. a CoNLL-U forest)
# Bounds on the work per sentence: the pairs grow with the square of the mentions and each path walk
# with the sentence length, so one pathological line (a T-REx evidence with 20,000 [MASK]s) would
# otherwise take minutes. Such a sentence is skipped whole; its pairs are counted under these keys.
MAX_SENTENCE_TOKENS = 400
MAX_MENTIONS_PER_SENTENCE = 50  # so at most 1,225 pairs per sentence
SENTENCE_TOO_LONG = "sentence_too_long"  # pairs of a sentence of more than MAX_SENTENCE_TOKENS tokens
TOO_MANY_MENTIONS = "sentence_too_many_mentions"  # pairs of a sentence with > MAX_MENTIONS_PER_SENTENCE


def _count(result: ExtractionResult, key: str) -> None:
    result.rejections[key] = result.rejections.get(key, 0) + 1


def over_limit(n_tokens: int, entity_ids: list[str], result: ExtractionResult) -> bool:
    """True when a sentence exceeds the bounds above; its distinct-entity pairs are then counted (under
    the key of the first bound exceeded) and none of them is tried."""
    if n_tokens <= MAX_SENTENCE_TOKENS and len(entity_ids) <= MAX_MENTIONS_PER_SENTENCE:
        return False
    n = len(entity_ids)
    same = sum(c * (c - 1) // 2 for c in Counter(entity_ids).values())
    key = SENTENCE_TOO_LONG if n_tokens > MAX_SENTENCE_TOKENS else TOO_MANY_MENTIONS
    result.rejections[key] = result.rejections.get(key, 0) + n * (n - 1) // 2 - same
    return True


def extract_pairs(
    sentence: DepSentence,
    spans: list[tuple[int, int, str]],
    result: ExtractionResult,
    *,
    sentence_index: int = 0,
) -> None:
    """Add to ``result`` the kept paths (and rejections) between every pair of distinct-entity mentions.

    ``sentence`` is in Stanford basic form; ``spans`` are (first token, last token, entity id) sorted by
    position. Each path is filtered (Appendix A) and stored in canonical orientation (subject left).
    Shared by the spaCy route (:func:`extract_doc`) and pre-parsed CoNLL-U input.
    """
    if over_limit(len(sentence.tokens), [entity for _, _, entity in spans], result):
        return
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
            result.instances.append(
                PathInstance(
                    path=canon,
                    arg1_entity_id=subj,
                    arg2_entity_id=obj,
                    subject_side=2 if reversed_ else 1,
                    sentence_text=sentence.text,
                    sentence_index=sentence_index,
                )
            )


def extract_doc(
    doc: Doc, document: Document, *, source: str = "<input>", alignment: str = "strict"
) -> ExtractionResult:
    """Path instances of one parsed document (see module doc).

    Mentions are aligned to ``doc``'s tokens as in :func:`align_mention` (InputError naming ``source``,
    the document's line and id; ``alignment``: what offsets that cut through a token become,
    :data:`deppath.parsing.ALIGNMENTS`).
    """
    result = ExtractionResult()
    if not document.mentions:
        return result
    arrays = doc_arrays(doc)
    sent_starts = [i for i, v in enumerate(arrays[6]) if v == 1 or i == 0]
    by_sentence: dict[int, list[tuple[int, int, Mention]]] = {}
    for m in document.mentions:
        first, last = align_mention(
            doc,
            m,
            source=source,
            line=document.line_number,
            document_id=document.document_id,
            alignment=alignment,
            text=document.text,
        )
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
        if over_limit(end - off, [m.entity_id for _, _, m in ments], result):
            continue  # before the conversion and repair passes, which also grow with the sentence
        ments.sort(key=lambda t: (t[0], t[1]))
        local = [(f - off, la - off) for f, la, _ in ments]
        dep = repair_mentions(DepSentence.from_doc(doc, off, end, arrays, document.text).stanford, local)
        extract_pairs(
            dep,
            [(f, la, m.entity_id) for (f, la), (_, _, m) in zip(local, ments, strict=True)],
            result,
            sentence_index=si,
        )
    return result


def path_for_text(
    text: str, left: str | tuple[int, int], right: str | tuple[int, int], *, nlp: Language | None = None
) -> str:
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
    (fl, ll), (fr, lr) = (token_span(doc, m) for m in document.mentions)
    sent = doc[fl].sent
    if not (sent.start <= fr < sent.end and ll < sent.end and lr < sent.end):
        return ""
    spans = [(fl - sent.start, ll - sent.start), (fr - sent.start, lr - sent.start)]
    dep = repair_mentions(DepSentence.from_span(sent).stanford, spans)
    a, b = dep.span_root(*spans[0]), dep.span_root(*spans[1])
    return path_between(dep, a, b) if a != b else ""
