"""`--format spacy` (issue 20, item 8): spaCy DocBin files, built here with the project's real spaCy
pipeline. A parsed DocBin loads the relation instances its text loads as jsonl, without spaCy running;
an unparsed one is parsed like text; bad DocBins are one line naming the file and the document, with
nothing loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deppath.parsing import load_nlp
from extract import cli, pipeline
from extract.loading import load_corpus
from warehouse.target import Target

# (id, text, [(surface, kb id)]): linked mentions; other names stay unlinked NER entities
DOCUMENTS = [
    ("d1", "Jeff Bezos founded Amazon in 1994.", [("Jeff Bezos", "Q312556"), ("Amazon", "Q3884")]),
    (
        "d2",
        "Amazon was founded by Jeff Bezos in Seattle. Microsoft acquired GitHub in 2018.",
        [("Amazon", "Q3884"), ("Jeff Bezos", "Q312556"), ("Microsoft", "Q2283"), ("GitHub", "Q364")],
    ),
    ("d3", "Bill Gates leads the Gates Foundation with Melinda French.", [("Bill Gates", "Q5284")]),
]


def _spans(text: str, mentions: list[tuple[str, str]]) -> list[tuple[int, int, str]]:
    return [(text.index(surface), text.index(surface) + len(surface), kb) for surface, kb in mentions]


def _jsonl(path: Path) -> Path:
    lines = []
    for doc_id, text, mentions in DOCUMENTS:
        spans = [{"start": s, "end": e, "entity": kb} for s, e, kb in _spans(text, mentions)]
        lines.append(json.dumps({"id": doc_id, "text": text, "mentions": spans}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _docbin(path: Path, *, parsed: bool, ids: bool = True, ner: bool = False, docs=None) -> Path:
    """The DOCUMENTS as a DocBin: parsed by the project's pipeline or only tokenised; linked entities
    with their kb ids (with ``ner``: the pipeline's other entities too, unlinked)."""
    from spacy.tokens import DocBin
    from spacy.util import filter_spans

    nlp = load_nlp(ner=ner)
    out = []
    for doc_id, text, mentions in docs or DOCUMENTS:
        doc = nlp(text) if parsed else nlp.make_doc(text)
        linked = [doc.char_span(s, e, label="ORG", kb_id=kb) for s, e, kb in _spans(text, mentions)]
        unlinked = [
            ent for ent in doc.ents if not any(ent.start < m.end and m.start < ent.end for m in linked)
        ]
        doc.ents = filter_spans(linked + (unlinked if ner else []))
        if ids:
            doc.user_data["id"] = doc_id
        out.append(doc)
    DocBin(store_user_data=True, docs=out).to_disk(path)
    return path


def _instances(target: Target, corpus: str) -> list[tuple]:
    with target.connect() as conn:
        return conn.execute(
            "select s.document_id, s.line_number, s.sentence_index, s.text, i.path, i.arg1_entity_id, "
            "i.arg2_entity_id, i.subject_side from raw.relation_instances i "
            "join raw.sentences s using (sentence_id) join raw.load_batches b on b.batch_id = i.batch_id "
            "where b.corpus_name = %s order by 1, 3, 5, 6, 7",
            (corpus,),
        ).fetchall()


def _extract(target: Target, capsys, *args: str) -> tuple[int, list[str], str]:
    code = cli.main(["--database-url", target.url(), "--quiet", *args])
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.startswith("error:")], err


def test_a_parsed_docbin_loads_what_its_text_loads_without_parsing_again(fresh_target, tmp_path, monkeypatch):
    text = load_corpus(fresh_target, _jsonl(tmp_path / "text.jsonl"), "jsonl", corpus="text")
    parsed = _docbin(tmp_path / "parsed.spacy", parsed=True)

    def no_parsing(*_args, **_kwargs):
        raise AssertionError("spaCy was loaded to parse a DocBin that brings its parses")

    monkeypatch.setattr(pipeline, "load_nlp", no_parsing)
    summary = load_corpus(fresh_target, parsed, "spacy", corpus="parsed", processes=2)
    assert summary.counts == text.counts and summary.rejections == text.rejections
    assert summary.reader_stats["sentences_parsed"] == text.reader_stats["sentences_parsed"] == 4
    rows = _instances(fresh_target, "parsed")
    assert rows == _instances(fresh_target, "text") and len(rows) == text.counts["instances"] >= 3
    assert ("d1", 1, 0, "Jeff Bezos founded Amazon in 1994.") == rows[0][:4]


def test_an_unparsed_docbin_is_parsed_like_text(fresh_target, tmp_path):
    text = load_corpus(fresh_target, _jsonl(tmp_path / "text.jsonl"), "jsonl", corpus="text")
    unparsed = load_corpus(
        fresh_target, _docbin(tmp_path / "plain.spacy", parsed=False), "spacy", corpus="plain", processes=2
    )
    assert unparsed.counts == text.counts
    assert _instances(fresh_target, "plain") == _instances(fresh_target, "text")


def test_docbin_ids_entities_and_the_ner_options(fresh_target, tmp_path, capsys):
    path = _docbin(tmp_path / "news.spacy", parsed=True, ids=False, ner=True)
    code, _, err = _extract(fresh_target, capsys, "corpus", "--format", "spacy", "--ner-mentions", str(path))
    assert code == 0, err
    with fresh_target.connect() as conn:
        documents = conn.execute("select document_id, line_number from raw.documents order by 2").fetchall()
        entities = {r[0] for r in conn.execute("select entity_id from raw.entities")}
        batch = conn.execute("select source_format, checksum, options from raw.load_batches").fetchone()
    assert documents == [("news.spacy:1", 1), ("news.spacy:2", 2), ("news.spacy:3", 3)]
    assert {"Q312556", "Q3884", "Q5284"} <= entities  # the kb ids
    assert "seattle" in entities  # an unlinked entity of the DocBin, added by --ner-mentions
    assert batch[0] == "spacy" and batch[2]["ner_mentions"] is True
    again = load_corpus(fresh_target, path, "spacy", ner_mentions=True)
    assert again.skipped  # the same bytes


def _bad_docbins(tmp_path: Path) -> dict[str, tuple[Path, int | None, str]]:
    from spacy.tokens import Doc, DocBin
    from spacy.vocab import Vocab

    not_docbin = tmp_path / "not_docbin.spacy"
    _jsonl(not_docbin)
    ud = Doc(
        Vocab(),
        words=["Bezos", "founded", "Amazon"],
        heads=[1, 1, 1],
        deps=["nsubj", "root", "obj"],
        tags=["NNP", "VBD", "NNP"],
        lemmas=["Bezos", "found", "Amazon"],
    )
    ud.ents = [ud.char_span(0, 5, label="PERSON", kb_id="Q1"), ud.char_span(14, 20, label="ORG", kb_id="Q2")]
    ud_path = tmp_path / "ud.spacy"
    DocBin(docs=[ud]).to_disk(ud_path)
    mixed = _docbin(tmp_path / "mixed.spacy", parsed=True)
    docbin = DocBin(store_user_data=True).from_disk(mixed)
    plain = load_nlp(ner=False).make_doc("Bob met Ann.")
    docbin.add(plain)
    docbin.to_disk(mixed)
    integer_id = tmp_path / "integer_id.spacy"
    docs = list(DocBin().from_disk(_docbin(tmp_path / "ids.spacy", parsed=True)).get_docs(Vocab()))
    docs[1].user_data["id"] = 2
    DocBin(store_user_data=True, docs=docs).to_disk(integer_id)
    empty = tmp_path / "empty.spacy"
    DocBin().to_disk(empty)
    return {
        "not_a_docbin": (not_docbin, None, "looks like JSON text, not a spaCy DocBin: use --format jsonl"),
        "ud_labels": (ud_path, 1, "doc 1: dependency label 'obj' is Universal Dependencies"),
        "mixed": (mixed, 4, "doc 4 has no DEP/TAG/LEMMA annotation while the file's first doc is parsed"),
        "integer_id": (integer_id, 2, "doc 2: user_data 'id' must be a non-empty string, got 2"),
        "empty": (empty, None, "no documents in the file"),
    }


@pytest.mark.parametrize("case", ["not_a_docbin", "ud_labels", "mixed", "integer_id", "empty"])
def test_a_bad_docbin_is_one_line_and_nothing_loaded(fresh_target, tmp_path, capsys, case):
    path, where, problem = _bad_docbins(tmp_path)[case]
    code, errors, err = _extract(fresh_target, capsys, "corpus", "--format", "spacy", str(path))
    assert code == 2 and "Traceback" not in err
    (line,) = errors
    prefix = f"error: {path}:{where}: " if where is not None else f"error: {path}: "
    assert line.startswith(prefix) and problem in line, line
    with fresh_target.connect() as conn:
        assert conn.execute("select status from raw.load_batches").fetchall() == [("failed",)]
        assert conn.execute("select count(*) from raw.sentences").fetchone()[0] == 0
