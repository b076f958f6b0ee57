"""extract.corpus_rows: the row logic both loaders (COPY and Spark) share, on hand-made results."""

from __future__ import annotations

from collections import Counter

from deppath.records import Document, ExtractionResult, Mention, PathInstance
from extract.corpus_rows import Tally, document_rows, entity_name, inline_type_rows


def instance(path: str, sentence: int, text: str) -> PathInstance:
    return PathInstance(path, "a", "b", 1, sentence_text=text, sentence_index=sentence)


def test_sentences_in_order_of_their_first_kept_path():
    document = Document("d1", "S0. S1. S2.", (), line_number=7)
    result = ExtractionResult([instance("p", 2, "S2."), instance("q", 0, "S0."), instance("r", 2, "S2.")])
    sentences, instances = document_rows(document, result)
    assert sentences == [("d1", 7, 2, "S2."), ("d1", 7, 0, "S0.")]  # sentence 1 has no kept path
    assert [(position, path) for position, path, *_ in instances] == [(0, "p"), (1, "q"), (0, "r")]


def test_most_frequent_name_wins_ties_alphabetical():
    assert entity_name(Counter({"Amazon": 2, "Amazon.com": 2, "AMZN": 1})) == "Amazon"
    assert entity_name(Counter({"b": 1, "a": 1})) == "a"


def test_ner_types_keep_the_majority_curated_types_all():
    types = Counter({"ORG": 2, "GPE": 2, "PERSON": 1})
    assert inline_type_rows("e", "ner", types) == [("e", "GPE", "ner")]
    assert inline_type_rows("e", "corpus", types) == [("e", t, "corpus") for t in ("GPE", "ORG", "PERSON")]


def test_tally_counts_and_merges_over_documents():
    tally = Tally()
    text = "Amazon hired Jassy."
    mentions = (Mention(0, 6, "Q1", types=("ORG",)), Mention(13, 18, "Q2", name="Andy Jassy"))
    tally.add(Document("d1", text, mentions, 1), ExtractionResult([], {"too_long": 2}))
    tally.add(Document("d2", text, mentions[:1], 2), ExtractionResult([], {"too_long": 1, "no_verb": 1}))
    assert (tally.documents, tally.mentions) == (2, 3)
    assert tally.rejections == Counter({"too_long": 3, "no_verb": 1})
    assert sorted(tally.entity_rows()) == [("Q1", "Amazon"), ("Q2", "Andy Jassy")]
    assert tally.type_rows() == [("Q1", "ORG", "corpus")]
