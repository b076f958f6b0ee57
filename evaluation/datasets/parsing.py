"""Text items (Levy/Holt triples, Zeichner sentences) get their dependency paths from the project's
extractor: the sentence "Griseofulvin kills infections" with the two argument strings as mentions gives the
path from argument A (the premise's first argument) to argument B, i.e. a SherLIiC-orientation path."""

from __future__ import annotations

from deppath.filters import rejection_rule
from deppath.parsing import load_nlp
from deppath.paths import DepSentence, is_reversed, path_between
from warehouse.terminal import Progress


def argument_heads(doc, sentence_text: str, first: str, second: str):
    """Token heads of the first and last argument of `first predicate second` in a parsed doc."""
    span1 = doc.char_span(0, len(first), alignment_mode="expand")
    start2 = len(sentence_text) - len(second)
    span2 = doc.char_span(start2, len(sentence_text), alignment_mode="expand")
    if span1 is None or span2 is None or span1.end > span2.start:
        return None
    dep = DepSentence.from_span(doc[:]).stanford
    return dep, dep.span_root(span1.start, span1.end - 1), dep.span_root(span2.start, span2.end - 1)


def parse_text_items(items: list[dict], *, show_progress: bool = True) -> None:
    """Fill premise/hypothesis paths of text items in place (A -> B, SherLIiC orientation)."""
    todo = [it for it in items if "_parse" in it["extra"]]
    if not todo:
        return
    sentences = sorted({f"{p[0]} {p[1]} {p[2]}" for it in todo for p in it["extra"]["_parse"].values()})
    nlp = load_nlp(ner=False)
    docs = {}
    for text, doc in zip(
        sentences,
        Progress(
            nlp.pipe(sentences, batch_size=256),
            total=len(sentences),
            desc="parsing benchmark sentences",
            disable=not show_progress,
            unit="sent",
        ),
        strict=True,
    ):
        docs[text] = doc
    for it in todo:
        parse = it["extra"].pop("_parse")
        for side in ("premise", "hypothesis"):
            first, pred, second, a_on_right = parse[side]
            text = f"{first} {pred} {second}"
            heads = argument_heads(docs[text], text, first, second)
            path = ""
            if heads is not None:
                dep, h1, h2 = heads
                if h1 != h2:
                    path = path_between(dep, h2, h1) if a_on_right else path_between(dep, h1, h2)
            if path:
                it[f"{side}_path"] = path
                it[f"is_{side}_reversed"] = is_reversed(path)
                rule = rejection_rule(path)
                if rule is not None:
                    it["extra"][f"{side}_rejected_by"] = rule
            else:
                it[f"{side}_path"] = None
