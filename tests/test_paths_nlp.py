"""The extraction pipeline (extract.pipeline) and the per-document passes (deppath.extraction):
mention alignment, pairs per sentence, filters, canonical orientation, rejection counts, and
multi-process parsing (real spaCy)."""

from __future__ import annotations

import pytest

from deppath.extraction import CROSSES_SENTENCE, OVERLAPPING, extract_doc
from deppath.parsing import load_nlp, parse_documents
from deppath.records import Document, Mention
from extract.pipeline import Extraction, extract_documents
from warehouse.errors import InputError


@pytest.fixture(scope="module")
def nlp():
    return load_nlp(ner=False)


def doc(doc_id: str, text: str, *names: str | tuple[str, str], line: int = 1) -> Document:
    """A document with mentions of the given names (first occurrence after the previous mention;
    a tuple gives (name, entity_id))."""
    mentions, pos = [], 0
    for n in names:
        name, eid = n if isinstance(n, tuple) else (n, n.replace(" ", "_"))
        at = text.find(name, pos)
        if at < 0:
            at = text.find(name)
        mentions.append(Mention(at, at + len(name), eid, name))
        pos = at + len(name)
    return Document(doc_id, text, tuple(mentions), line)


def run(docs, processes: int = 1, **options):
    return list(extract_documents(docs, Extraction(**options), processes=processes))


def test_kept_instance_in_canonical_orientation(nlp):
    [(d, res)] = run([doc("d1", "Ukraine was invaded by Russia.", "Ukraine", "Russia")])
    assert d.document_id == "d1"
    [inst] = res.instances
    assert inst.path == "nsubjpass^-___invade___prep___by___pobj"
    assert (inst.arg1_entity_id, inst.arg2_entity_id, inst.subject_side) == ("Ukraine", "Russia", 1)
    assert inst.sentence_text == "Ukraine was invaded by Russia."
    assert inst.sentence_index == 0
    assert res.rejections == {}


def test_subject_on_the_right_is_swapped(nlp):
    # reading order: Amazon first, but the subject Bezos becomes arg1
    [(_, res)] = run([doc("d", "Amazon, which Bezos leads, grew.", "Amazon", "Bezos")])
    [inst] = res.instances
    assert inst.path == "nsubj^-___lead___rcmod^-"
    assert (inst.arg1_entity_id, inst.arg2_entity_id, inst.subject_side) == ("Bezos", "Amazon", 2)


def test_pairs_per_sentence_and_rejection_counts(nlp):
    text = "Obama met Putin in Moscow. Later, Merkel visited Paris."
    [(_, res)] = run([doc("d", text, "Obama", "Putin", "Moscow", "Merkel", "Paris")])
    paths = {(i.arg1_entity_id, i.path, i.arg2_entity_id, i.sentence_index) for i in res.instances}
    assert paths == {
        ("Obama", "nsubj^-___meet___dobj", "Putin", 0),
        ("Obama", "nsubj^-___meet___prep___in___pobj", "Moscow", 0),
        ("Merkel", "nsubj^-___visit___dobj", "Paris", 1),
    }
    # Putin–Moscow (dobj … pobj) has no subject end; pairs across sentences are not pairs at all
    assert res.rejections == {"rule1_subject_end": 1}


def test_same_entity_pairs_are_skipped_and_overlaps_counted(nlp):
    text = "Bezos leads Amazon, but Bezos loves Amazon Web Services."
    d = Document(
        "d",
        text,
        (
            Mention(0, 5, "Bezos"),
            Mention(12, 18, "Amazon"),
            Mention(24, 29, "Bezos"),
            Mention(36, 55, "AWS"),
            Mention(36, 42, "Amazon"),
        ),
        1,
    )
    # the last mention ("Amazon" inside "Amazon Web Services") overlaps the AWS mention
    [(_, res)] = run([d])
    assert res.rejections.get(OVERLAPPING) == 1
    assert all(i.arg1_entity_id != i.arg2_entity_id for i in res.instances)
    kept = {(i.arg1_entity_id, i.path, i.arg2_entity_id) for i in res.instances}
    assert {("Bezos", "nsubj^-___lead___dobj", "Amazon"), ("Bezos", "nsubj^-___love___dobj", "AWS")} <= kept


def test_mention_crossing_a_sentence_boundary_is_counted(nlp):
    text = "Bezos leads Amazon. Obama met Putin."
    # a mention spanning "Amazon. Obama"
    d = Document("d", text, (Mention(0, 5, "Bezos"), Mention(12, 25, "bad"), Mention(30, 35, "Putin")), 1)
    [(_, res)] = run([d])
    assert res.rejections == {CROSSES_SENTENCE: 1}
    assert res.instances == []


def test_alignment_errors_name_source_line_and_document(nlp):
    bad_range = Document("doc7", "Bezos leads Amazon", (Mention(0, 5, "B"), Mention(12, 40, "A")), 7)
    with pytest.raises(InputError, match=r"corpus\.jsonl:7: document 'doc7'.*out of range"):
        run([bad_range], source="corpus.jsonl")
    cut = Document("doc8", "Bezos leads Amazon", (Mention(0, 3, "B"), Mention(12, 18, "A")), 8)
    with pytest.raises(InputError, match=r"corpus\.jsonl:8: .*'Bez' does not align to token boundaries"):
        run([cut], source="corpus.jsonl")
    # expand mode widens the mention to the whole token
    [(_, res)] = run([cut], alignment="expand")
    assert [i.path for i in res.instances] == ["nsubj^-___lead___dobj"]
    with pytest.raises(ValueError, match="alignment"):
        run([cut], alignment="loose")


def test_error_surfaces_in_input_order(nlp):
    good = doc("ok", "Bezos leads Amazon", "Bezos", "Amazon")
    bad = Document("bad", "Bezos leads Amazon", (Mention(0, 3, "B"), Mention(12, 18, "A")), 2)
    it = extract_documents([good, bad])
    first = next(it)
    assert first[0].document_id == "ok" and first[1].instances
    with pytest.raises(InputError):
        next(it)


def test_documents_with_fewer_than_two_mentions(nlp):
    out = run([doc("a", "Bezos spoke.", "Bezos"), Document("b", "Nothing here.", (), 2)])
    assert [(d.document_id, r.instances, r.rejections) for d, r in out] == [("a", [], {}), ("b", [], {})]
    # a lone mention is still checked
    with pytest.raises(InputError, match="out of range"):
        run([Document("c", "Bezos spoke.", (Mention(6, 99, "x"),), 3)])


def test_mentions_from_ner():
    [(d, res)] = run(
        [Document("t", "Barack Obama visited Germany in 2009.", (), 1)], ner_mentions=True, ner_types=True
    )
    assert {m.entity_id for m in d.mentions} >= {"barack obama", "germany"}  # normalised names
    assert all(m.types for m in d.mentions) and d.type_source == "ner"
    assert [(i.arg1_entity_id, i.path, i.arg2_entity_id) for i in res.instances] == [
        ("barack obama", "nsubj^-___visit___dobj", "germany")
    ]


def test_two_processes_give_the_same_result(nlp):
    docs = [
        doc(
            "d1", "Bezos leads Amazon. Ukraine was invaded by Russia.", "Bezos", "Amazon", "Ukraine", "Russia"
        ),
        doc("d2", "Obama met Putin in Moscow.", "Obama", "Putin", "Moscow"),
        doc("d3", "Gulf Air is Croatia's carrier.", "Gulf Air", "Croatia"),
        doc("d4", "Apple wants to buy Beats.", "Apple", "Beats"),
    ]
    one = run(docs, processes=1)
    two = run(docs, processes=2)
    assert one == two
    assert sum(len(r.instances) for _, r in one) == 6


def test_merge_mentions_parses_each_mention_as_one_token(nlp):
    text = "Saddam Hussein is United States of America's friend."
    d = doc("m", text, "Saddam Hussein", "United States of America")
    [(_, parsed)] = parse_documents([d], nlp=nlp, merge_mentions=True)
    res = extract_doc(parsed, d, alignment="expand")
    assert [(i.arg1_entity_id, i.path, i.arg2_entity_id) for i in res.instances] == [
        ("Saddam_Hussein", "nsubj^-___friend___poss", "United_States_of_America")
    ]
    bad = Document("bad", text, (Mention(0, 3, "S"), Mention(18, 24, "U")), 3)
    with pytest.raises(InputError, match=r"x\.tsv:3: .*does not align"):
        list(parse_documents([bad], nlp=nlp, merge_mentions=True, source="x.tsv"))
