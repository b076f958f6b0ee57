"""Corpus readers (extract/formats): real samples from the shared data, fixtures, bad input."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from extract.formats import FORMATS, reader
from extract.formats.base import CorpusReader, PreparsedReader
from extract.formats.documents import find_surface, normalise_name
from extract.formats.fewrel import detokenize
from extract.formats.grec import strip_markup, title_from_url
from extract.formats.trex import restore
from warehouse.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "formats"


def _first(iterable, n):
    out = []
    for item in iterable:
        out.append(item)
        if len(out) == n:
            break
    return out


# -- jsonl (the project's own format) ------------------------------------------------------------------
def test_jsonl_fixture():
    docs = list(reader("jsonl").read(FIXTURES / "sample.jsonl"))
    assert [d.document_id for d in docs] == ["d1", "d2", "d3"]
    assert [d.line_number for d in docs] == [1, 3, 4]  # blank line 2 skipped, numbering kept
    bezos, amazon = docs[0].mentions
    assert docs[0].text[bezos.start : bezos.end] == "Jeff Bezos" and bezos.entity_id == "Q312556"
    assert bezos.types == ("/person",) and amazon.name == "Amazon.com"
    assert docs[1].mentions[1].name == "Andy Jassy"  # default name = covered text


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"id": "1", "text": "A b", "mentions": [}', "malformed JSON"),
        ('{"id": "1", "mentions": []}', "missing field 'text'"),
        (
            '{"id": "1", "text": "A b", "mentions": [{"start": 0, "end": 9, "entity": "x"}]}',
            "outside the text",
        ),
        ('{"id": "1", "text": "A b", "mentions": [{"start": 0, "end": 1}]}', "missing field 'entity'"),
        ('{"id": "1", "text": "A b", "mentions": [{"start": "0", "end": 1, "entity": "x"}]}', "must be int"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_jsonl_bad_lines_name_file_line_problem(tmp_path, line, problem):
    path = tmp_path / "bad.jsonl"
    good = '{"id": "ok", "text": "Bob met Ann.", "mentions": []}'
    path.write_text(good + "\n" + line + "\n")
    with pytest.raises(InputError) as err:
        list(reader("jsonl").read(path))
    assert err.value.file == str(path) and err.value.line == 2 and problem in err.value.problem
    assert str(err.value).startswith(f"{path}:2: ")


def test_wrong_encoding_names_the_line(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(
        b'{"id": "1", "text": "ok", "mentions": []}\n{"id": "2", "text": "M\xfcller", "mentions": []}\n'
    )
    with pytest.raises(InputError) as err:
        list(reader("jsonl").read(path))
    assert err.value.line == 2 and "not valid UTF-8" in err.value.problem and "0xfc" in err.value.problem


def test_empty_file_is_an_error(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(InputError, match="file is empty"):
        list(reader("jsonl").read(path))
    path.write_text("\n\n")
    with pytest.raises(InputError, match="no records"):
        list(reader("jsonl").read(path))


def test_skip_bad_handler_receives_errors_and_reading_goes_on(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        '{"text": "A", "mentions": []}\nnot json\n{"mentions": []}\n{"text": "B", "mentions": []}\n'
    )
    errors: list[InputError] = []
    docs = list(reader("jsonl").read(path, on_error=errors.append))
    assert [d.text for d in docs] == ["A", "B"]
    assert [e.line for e in errors] == [2, 3]


def test_unknown_format_lists_the_formats():
    with pytest.raises(ValueError, match="jsonl"):
        reader("xml")
    assert set(FORMATS) == {
        "jsonl",
        "fewrel",
        "trex",
        "google_re",
        "grec",
        "facc1",
        "conllu",
        "text",
        "spacy",
    }
    assert reader("jsonl").alignment == "strict" and reader("trex").alignment == "expand"
    assert reader("text").needs_ner and not reader("jsonl").needs_ner
    assert isinstance(reader("conllu"), PreparsedReader) and isinstance(reader("fewrel"), CorpusReader)
    with pytest.raises(ValueError, match="takes no options"):
        reader("jsonl", docs_dir="x")


# -- helpers --------------------------------------------------------------------------------------------
def test_detokenize_offsets():
    text, offsets = detokenize(["Cape", "Girardeau", "(", "Missouri", ")", "'s", "bridge", "."])
    assert text == "Cape Girardeau (Missouri)'s bridge."
    assert [text[s:e] for s, e in offsets] == ["Cape", "Girardeau", "(", "Missouri", ")", "'s", "bridge", "."]


def test_trex_restore_and_surface_search():
    text, spans = restore("Both honour the English [MASK] Alan Turing.", "logician")
    assert text == "Both honour the English logician Alan Turing." and text[slice(*spans[0])] == "logician"
    assert find_surface(text, ["Turing"], spans) == [(38, 44)]
    assert find_surface("Turingery by Turing", ["Turing"], []) == [(13, 19)]  # whole words only
    assert find_surface("x", ["Nope", "x"], []) == []  # surfaces shorter than 2 chars are ignored


def test_grec_markup_and_titles():
    text, marked = strip_markup("Adam received a ((NAM: Bachelor of Science)) in commerce.")
    assert text == "Adam received a Bachelor of Science in commerce." and marked == ["Bachelor of Science"]
    assert title_from_url("http://en.wikipedia.org/wiki/To%C3%B1o_Salazar") == "Toño Salazar"
    assert normalise_name("The  Beatles's") == "beatles"


# -- real samples from the shared data --------------------------------------------------------------------
def test_fewrel_real_sample(shared_data):
    docs = _first(reader("fewrel").read(shared_data / "corpora/fewrel/val_wiki.json"), 5)
    first = docs[0]
    assert first.document_id == "val_wiki.json:P177:0" and first.line_number == 1
    names = {m.entity_id: first.text[m.start : m.end] for m in first.mentions}
    assert names == {"Q5034838": "Cape Girardeau Bridge", "Q1497": "Mississippi River"}
    assert all(len({m.entity_id for m in d.mentions}) == 2 for d in docs)


def test_trex_real_sample(shared_data):
    stats: Counter = Counter()
    docs = _first(reader("trex").read(shared_data / "corpora/trex/P101.jsonl", stats=stats), 3)
    first = docs[0]
    by_id = {m.entity_id: first.text[m.start : m.end] for m in first.mentions}
    assert by_id == {"Q7251": "Turing", "Q8078": "logician"}
    assert "[MASK]" not in first.text and first.line_number == 1
    assert {m.name for m in first.mentions} == {"Alan Turing", "logic"}  # KG labels as names
    assert stats["duplicate_evidence"] >= 1  # the first fact repeats evidence sentences


def test_google_re_real_sample(shared_data):
    stats: Counter = Counter()
    path = shared_data / "corpora/google_re/place_of_birth_test.jsonl"
    docs = _first(reader("google_re").read(path, stats=stats), 50)
    first = docs[0]
    assert {(m.entity_id, first.text[m.start : m.end]) for m in first.mentions} >= {
        ("/m/047fprg", "Khatchig Mouradian"),
        ("/m/04hqz", "Lebanon"),
    }
    # Every found mention covers its label, an alias or the surname exactly.
    found = sum(1 for d in docs if len({m.entity_id for m in d.mentions}) == 2)
    assert found >= 40
    dob = _first(
        reader("google_re").read(shared_data / "corpora/google_re/date_of_birth_test.jsonl", stats=stats), 5
    )
    assert all(m.entity_id.startswith("/m/") for d in dob for m in d.mentions)  # literal dates skipped
    assert stats["literal_object"] == 5


def test_grec_real_sample(shared_data):
    stats: Counter = Counter()
    path = shared_data / "corpora/grec/20131104-place_of_death.json"
    docs = _first(reader("grec", names={"/m/0ftfw": "San Salvador"}).read(path, stats=stats), 1)
    assert {(m.entity_id, docs[0].text[m.start : m.end]) for m in docs[0].mentions} == {
        ("/m/0fn28k", "Toño Salazar"),
        ("/m/0ftfw", "San Salvador"),
    }
    edu = _first(reader("grec").read(shared_data / "corpora/grec/20131104-education-degree.json"), 1)[0]
    assert "((" not in edu.text
    assert ("/m/02h4rq6", "Bachelor of Science") in {
        (m.entity_id, edu.text[m.start : m.end]) for m in edu.mentions
    }


# -- committed fixtures: FACC1, CoNLL-U, text --------------------------------------------------------------
def test_facc1_fixture_byte_offsets():
    docs = list(reader("facc1").read(FIXTURES / "facc1_docs" / "annotations.tsv"))
    assert [d.document_id for d in docs] == ["clueweb12-0000tw-00-00001", "clueweb12-0000tw-00-00002"]
    assert [d.line_number for d in docs] == [1, 5]
    first = docs[0]
    # "Müller" is 7 bytes but 6 characters: the byte offsets 15..28 become characters 14..27.
    assert [(first.text[m.start : m.end], m.entity_id) for m in first.mentions] == [
        ("Müller", "/m/0c1y4"),
        ("Bayern Munich", "/m/01xn5sc"),
        ("Bayern Munich", "/m/01xn5sc"),
        ("Müller", "/m/0c1y4"),
    ]
    assert docs[1].mentions[-1].name == "Angela Merkel"  # first surface of the entity names it


def test_facc1_offsets_must_match_the_mention(tmp_path):
    (tmp_path / "d1.txt").write_text("Bob met Ann.")
    path = tmp_path / "ann.tsv"
    path.write_text("d1\tUTF-8\tBob\t0\t3\t0.9\t0.9\t/m/1\nd1\tUTF-8\tAnn\t7\t10\t0.9\t0.9\t/m/2\n")
    with pytest.raises(InputError) as err:
        list(reader("facc1").read(path))
    assert err.value.line == 2 and "not the mention 'Ann'" in err.value.problem
    path.write_text("d2\tUTF-8\tBob\t0\t3\t0.9\t0.9\t/m/1\n")
    with pytest.raises(InputError, match="text of document 'd2' not found"):
        list(reader("facc1").read(path))


def test_conllu_fixture_paths_without_spacy():
    results = list(reader("conllu").read_extracted(FIXTURES / "sample.conllu"))
    (doc1, res1), (doc2, res2) = results
    assert doc1.document_id == "s1" and doc2.line_number == 9
    assert [(i.path, i.arg1_entity_id, i.arg2_entity_id) for i in res1.instances] == [
        ("nsubj^-___found___dobj", "Q312556", "Q3884")
    ]
    paths = {(i.path, i.arg2_entity_id) for i in res2.instances}
    assert ("nsubjpass^-___found___prep___by___pobj", "Q312556") in paths  # ClearNLP agent → prep
    assert res2.rejections == {"rule1_subject_end": 1}  # Bezos–Seattle has no subject end


def test_conllu_rejects_universal_dependencies():
    with pytest.raises(InputError) as err:
        list(reader("conllu").read_extracted(FIXTURES / "ud_labels.conllu", on_error=lambda e: None))
    assert "Universal Dependencies" in err.value.problem and "Stanford basic or ClearNLP" in err.value.problem


def test_conllu_bad_bio(tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text(
        "1\tBob\tBob\tPROPN\tNNP\t_\t2\tnsubj\t_\tEntity=I-Q1\n2\truns\trun\tVERB\tVBZ\t_\t0\tROOT\t_\t_\n"
    )
    with pytest.raises(InputError) as err:
        list(reader("conllu").read_extracted(path))
    assert err.value.line == 1 and "does not continue" in err.value.problem


def test_text_reader_paragraphs():
    docs = list(reader("text").read(FIXTURES / "sample.txt"))
    assert [d.line_number for d in docs] == [1, 4]
    assert docs[0].text.startswith("Barack Obama met Angela Merkel in Berlin. Microsoft")
    assert docs[0].mentions == () and docs[0].type_source == "ner"
    assert json.dumps(docs[1].text) == '"Angela Merkel praised Barack Obama."'
