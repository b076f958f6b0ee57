"""`--format spacy` (issue 20, item 8): spaCy DocBin files, built here with the project's real spaCy
pipeline. A parsed DocBin loads the relation instances its text loads as jsonl, without spaCy running;
an unparsed one is parsed like text; bad DocBins are one line naming the file and the document, with
nothing loaded."""

from __future__ import annotations

import json
import tracemalloc
import zlib
from pathlib import Path

import pytest

from deppath.parsing import load_nlp
from extract import cli, pipeline
from extract.formats import docbin_limits
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


def _docbin(
    path: Path, *, parsed: bool, ids: bool = True, ner: bool = False, docs=None, kb_ids: bool = True
) -> Path:
    """The DOCUMENTS as a DocBin: parsed by the project's pipeline or only tokenised; linked entities
    with their kb ids (with ``ner``: the pipeline's other entities too, unlinked; without ``kb_ids``: the
    linked entities lose their kb ids)."""
    from spacy.tokens import DocBin
    from spacy.util import filter_spans

    nlp = load_nlp(ner=ner)
    out = []
    for doc_id, text, mentions in docs or DOCUMENTS:
        doc = nlp(text) if parsed else nlp.make_doc(text)
        linked = [
            doc.char_span(s, e, label="ORG", kb_id=kb if kb_ids else "")
            for s, e, kb in _spans(text, mentions)
        ]
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
    i_without_b = _i_without_b(tmp_path / "i_without_b.spacy", bad=2)
    unlinked = _docbin(tmp_path / "unlinked.spacy", parsed=True, kb_ids=False)
    return {
        "not_a_docbin": (not_docbin, None, "looks like JSON text, not a spaCy DocBin: use --format jsonl"),
        "ud_labels": (ud_path, 1, "doc 1: dependency label 'obj' is Universal Dependencies"),
        "mixed": (mixed, 4, "doc 4 has no DEP/TAG/LEMMA annotation while the file's first doc is parsed"),
        "integer_id": (integer_id, 2, "doc 2: user_data 'id' must be a non-empty string, got 2"),
        "empty": (empty, None, "no documents in the file"),
        "i_without_b": (i_without_b, 2, "doc 2 cannot be read from the DocBin (ValueError: [E093]"),
        "unlinked": (unlinked, None, "none of the 7 entities of its 3 documents has a kb_id_"),
    }


def _i_without_b(path: Path, bad: int) -> Path:
    """The parsed DOCUMENTS as a DocBin whose document `bad` has an entity whose first tag is I, not B."""
    from spacy.attrs import ENT_IOB
    from spacy.tokens import DocBin

    docbin = DocBin(store_user_data=True).from_disk(_docbin(path, parsed=True))
    tokens = docbin.tokens[bad - 1].copy()
    tokens[0, docbin.attrs.index(ENT_IOB)] = 1  # I: its first token begins an entity
    docbin.tokens[bad - 1] = tokens
    docbin.to_disk(path)
    return path


@pytest.mark.parametrize(
    "case", ["not_a_docbin", "ud_labels", "mixed", "integer_id", "empty", "i_without_b", "unlinked"]
)
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


def test_a_document_that_cannot_be_read_is_skipped_with_skip_bad(fresh_target, tmp_path, capsys):
    """Entity tags that begin with I (spaCy's E093): with --skip-bad that document is one bad record,
    skipped and counted, also when it is the first one (which decides whether the parses are read)."""
    path = _i_without_b(tmp_path / "first_bad.spacy", bad=1)
    code, errors, err = _extract(fresh_target, capsys, "corpus", "--format", "spacy", "--skip-bad", str(path))
    assert (code, errors) == (0, []) and "Traceback" not in err, err
    with fresh_target.connect() as conn:
        documents = [row[0] for row in conn.execute("select document_id from raw.documents order by 1")]
        bad = conn.execute("select status, n_bad_lines from raw.load_batches").fetchall()
    assert documents == ["d2", "d3"] and bad == [("loaded", 1)]


def test_a_docbin_without_kb_ids_loads_with_ner_mentions(fresh_target, tmp_path, capsys):
    path = _docbin(tmp_path / "unlinked.spacy", parsed=True, kb_ids=False)
    code, errors, err = _extract(
        fresh_target, capsys, "corpus", "--format", "spacy", "--ner-mentions", str(path)
    )
    assert (code, errors) == (0, []), err
    with fresh_target.connect() as conn:
        assert conn.execute("select count(*) from raw.relation_instances").fetchone()[0] > 0


def _zlib_bomb(path: Path, inflated: int) -> Path:
    """A file of zlib-compressed zeros (`inflated` bytes of them: about a thousandth of that on disk)."""
    compressor, chunk = zlib.compressobj(9), bytes(1 << 20)
    with path.open("wb") as out:
        for _ in range(inflated // len(chunk)):
            out.write(compressor.compress(chunk))
        out.write(compressor.flush())
    return path


def test_a_docbin_bomb_is_refused_within_the_declared_memory(fresh_target, tmp_path, capsys, monkeypatch):
    """A DocBin inflating to more than MAX_DOCBIN_BYTES is refused while a megabyte at a time is inflated
    (here a limit of 1 MiB and 64 MiB of zeros in a 64 KB file; spaCy alone inflates all of it)."""
    monkeypatch.setattr(docbin_limits, "MAX_DOCBIN_BYTES", 1 << 20)
    path = _zlib_bomb(tmp_path / "bomb.spacy", 64 << 20)
    tracemalloc.start()
    try:
        code, errors, err = _extract(fresh_target, capsys, "corpus", "--format", "spacy", str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2 and "Traceback" not in err
    assert errors == [
        f"error: {path}: the DocBin inflates to more than 1,048,576 bytes, the limit of --format spacy (a "
        "bound on the memory its reading takes); split it into smaller DocBins"
    ]
    assert peak < 16 << 20, f"{peak:,} bytes allocated while reading the DocBin"


def test_the_values_a_docbin_unpacks_to_are_bounded(fresh_target, tmp_path, capsys, monkeypatch):
    """Each msgpack value becomes a Python object (an empty map: 1 byte of msgpack, 64 of memory): the
    values of a file and of a document's user_data are counted before they are unpacked."""
    path = _docbin(tmp_path / "news.spacy", parsed=True)
    monkeypatch.setattr(docbin_limits, "MAX_USER_DATA_VALUES", 2)  # {"id": "d1"}: a map, a key, a value
    code, errors, _ = _extract(fresh_target, capsys, "corpus", "--format", "spacy", str(path))
    assert code == 2 and errors == [
        f"error: {path}:1: doc 1 cannot be read from the DocBin (ValueError: its user_data holds more than "
        "2 values)"
    ]
    monkeypatch.setattr(docbin_limits, "MAX_DOCBIN_VALUES", 50)
    code, errors, _ = _extract(fresh_target, capsys, "corpus", "--format", "spacy", str(path))
    assert code == 2 and errors == [
        f"error: {path}: the DocBin holds more than 50 values (strings, maps, ...), the limit of --format "
        "spacy (a bound on the memory its reading takes); split it into smaller DocBins"
    ]


def test_msgpack_values_are_counted_without_unpacking_them() -> None:
    import srsly

    value = {"id": "d1", "list": [1, -1, 300, 2.5, None, True, "x" * 40, b"y" * 300, [], {}], "big": 2**40}
    assert docbin_limits.msgpack_values(srsly.msgpack.packb(value), 100) == 1 + 2 * 3 + 10
    empty_maps, huge_array = b"\x80" * 1000, b"\xdd\xff\xff\xff\xff"
    assert docbin_limits.msgpack_values(empty_maps + huge_array, 10) == 1  # one value: an empty map
    assert docbin_limits.msgpack_values(huge_array + empty_maps, 10) == 11  # counted to the limit + 1
    inflated = docbin_limits.Inflated(zlib.compress(srsly.msgpack.packb(value)))
    assert docbin_limits.msgpack_values(inflated, 100) == 17
