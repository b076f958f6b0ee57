"""Loaded once, whatever the shape (issue 21): document ids unique within a corpus, a record repeated in
a file stored once, a file's identity independent of its layout, a mention once per document, ids in
NFC and typed, malformed trees and spans and deeply nested JSON refused in one line. Real embedded
Postgres and real spaCy."""

from __future__ import annotations

import hashlib
import json
import threading
import unicodedata
from pathlib import Path

import pytest

from extract import cli
from extract.loading import load_corpus, load_types
from warehouse.errors import InputError
from warehouse.target import Target

FORMATS = Path(__file__).parent / "fixtures" / "formats"


def _line(text: str, mentions: list[tuple[str, str]], doc_id: str | None = None) -> str:
    """A jsonl record; mentions as (surface, entity), found in the text."""
    record: dict = {"text": text, "mentions": []}
    if doc_id is not None:
        record["id"] = doc_id
    for surface, entity in mentions:
        start = text.index(surface)
        record["mentions"].append({"start": start, "end": start + len(surface), "entity": entity})
    return json.dumps(record, ensure_ascii=False)


BEZOS = _line("Jeff Bezos founded Amazon in 1994.", [("Jeff Bezos", "Q1"), ("Amazon", "Q2")], "d1")
GATES = _line("Bill Gates founded Microsoft in 1975.", [("Bill Gates", "Q3"), ("Microsoft", "Q4")], "d2")
OTHER_D1 = _line("Larry Page founded Google in 1998.", [("Larry Page", "Q5"), ("Google", "Q6")], "d1")


def _write(path: Path, *lines: str, newline: str = "\n") -> Path:
    path.write_bytes("".join(line + newline for line in lines).encode("utf-8"))
    return path


def _rows(target: Target, query: str, *params: object) -> list[tuple]:
    with target.connect() as conn:
        return conn.execute(query, params or None).fetchall()


def _count(target: Target, table: str) -> int:
    return _rows(target, f"select count(*) from raw.{table}")[0][0]


def _extract(target: Target, capsys, *args: str) -> tuple[int, list[str], str]:
    code = cli.main(["--database-url", target.url(), "--quiet", *args])
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.startswith("error:")], err


# -- document ids unique within a corpus -----------------------------------------------------------------
def test_one_id_for_two_documents_of_a_file_is_refused_naming_both_lines(fresh_target, tmp_path):
    path = _write(tmp_path / "news.jsonl", BEZOS, GATES, OTHER_D1)
    with pytest.raises(InputError) as err:
        load_corpus(fresh_target, path, "jsonl")
    assert str(err.value).startswith(f"{path}:3: document id 'd1' is already used by the document at line 1")
    assert _count(fresh_target, "sentences") == 0 and _count(fresh_target, "documents") == 0
    summary = load_corpus(fresh_target, path, "jsonl", on_duplicate="skip")
    assert summary.counts["documents"] == 2 and summary.reader_stats["duplicate_documents"] == 1
    assert _rows(fresh_target, "select document_id, line_number from raw.documents order by 1") == [
        ("d1", 1),
        ("d2", 2),
    ]
    texts = [r[0] for r in _rows(fresh_target, "select text from raw.sentences order by 1")]
    assert texts == ["Bill Gates founded Microsoft in 1975.", "Jeff Bezos founded Amazon in 1994."]


def test_one_id_in_two_files_of_a_corpus_is_refused_naming_the_other_file(fresh_target, tmp_path, capsys):
    first = _write(tmp_path / "a.jsonl", BEZOS)
    second = _write(tmp_path / "b.jsonl", GATES, OTHER_D1)
    assert load_corpus(fresh_target, first, "jsonl", corpus="news").batch_id == 1
    code, errors, err = _extract(
        fresh_target, capsys, "corpus", "--format", "jsonl", "--corpus", "news", str(second)
    )
    assert code == 2 and "Traceback" not in err
    assert errors == [
        f"error: {second}:2: document id 'd1' is already used by the document at {first}:1 (batch 1) of "
        "corpus 'news' (document ids are unique within a corpus; --on-duplicate skip keeps the first)"
    ]
    code, errors, err = _extract(
        fresh_target,
        capsys,
        "corpus",
        "--format",
        "jsonl",
        "--corpus",
        "news",
        "--on-duplicate",
        "skip",
        str(second),
    )
    assert code == 0, err
    assert _rows(fresh_target, "select document_id from raw.documents order by 1") == [("d1",), ("d2",)]
    assert _count(fresh_target, "sentences") == 2  # Larry Page's d1 skipped
    # another corpus has ids of its own
    assert load_corpus(fresh_target, _write(tmp_path / "c.jsonl", OTHER_D1), "jsonl", corpus="web").batch_id


def test_two_loads_of_one_corpus_at_once_cannot_both_use_an_id(fresh_target, tmp_path):
    """The first load holds its transaction open (after reading its documents) while a second load of
    the same corpus commits the same id: the first one's last step sees it and refuses."""
    reached, release = threading.Event(), threading.Event()
    outcome: list = []

    def held(_documents: int) -> None:
        reached.set()
        release.wait(120)

    def first() -> None:
        try:
            outcome.append(
                load_corpus(
                    fresh_target, _write(tmp_path / "a.jsonl", BEZOS), "jsonl", corpus="c", progress=held
                )
            )
        except InputError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert reached.wait(120)
        second = _write(tmp_path / "b.jsonl", OTHER_D1)
        assert not load_corpus(fresh_target, second, "jsonl", corpus="c").skipped
    finally:
        release.set()
        thread.join(120)
    (error,) = outcome
    assert isinstance(error, InputError) and f"is already used by the document at {second}:1" in str(error)
    assert _rows(
        fresh_target,
        "select d.document_id, b.source_file from raw.documents d join raw.load_batches b using (batch_id)",
    ) == [("d1", str(second))]


# -- the same record twice in a file ------------------------------------------------------------------------
TREX_FACT = json.dumps(
    {
        "uuid": "u1",
        "sub_uri": "Q1",
        "sub_label": "Jeff Bezos",
        "obj_uri": "Q2",
        "obj_label": "Amazon",
        "evidences": [
            {
                "sub_surface": "Jeff Bezos",
                "obj_surface": "Amazon",
                "masked_sentence": "Jeff Bezos founded [MASK] in 1994 .",
            }
        ],
    }
)
CONLLU_BLOCK = (FORMATS / "sample.conllu").read_text(encoding="utf-8").split("\n\n")[0]
REPEATS = {
    "jsonl_with_id": ("jsonl", BEZOS),
    "jsonl_without_id": (
        "jsonl",
        _line("Jeff Bezos founded Amazon in 1994.", [("Jeff Bezos", "Q1"), ("Amazon", "Q2")]),
    ),
    "trex": ("trex", TREX_FACT),
    "conllu_with_sent_id": ("conllu", CONLLU_BLOCK + "\n"),
    "conllu_without_sent_id": (
        "conllu",
        "\n".join(line for line in CONLLU_BLOCK.splitlines() if "sent_id" not in line) + "\n",
    ),
}


@pytest.mark.parametrize("case", sorted(REPEATS))
def test_a_record_repeated_in_a_file_is_stored_once(fresh_target, tmp_path, case):
    fmt, record = REPEATS[case]
    once = load_corpus(fresh_target, _write(tmp_path / "once.txt", record), fmt, corpus="once")
    twice = load_corpus(fresh_target, _write(tmp_path / "twice.txt", record, "", record), fmt, corpus="twice")
    assert once.counts["instances"] >= 1
    assert twice.counts == once.counts and twice.reader_stats["repeated_records"] == 1
    per_corpus = _rows(
        fresh_target,
        "select b.corpus_name, count(*) from raw.relation_instances i "
        "join raw.load_batches b using (batch_id) group by 1 order by 1",
    )
    assert per_corpus == [("once", once.counts["instances"]), ("twice", once.counts["instances"])]


# -- a file's identity: its content, not its layout ----------------------------------------------------------
def test_line_endings_and_trailing_whitespace_do_not_make_another_file(fresh_target, tmp_path):
    path = _write(tmp_path / "news.jsonl", BEZOS, GATES)
    first = load_corpus(fresh_target, path, "jsonl")
    _write(path, BEZOS + "  ", GATES + "\t", "", " ", newline="\r\n")  # CRLF, trailing spaces and lines
    again = load_corpus(fresh_target, path, "jsonl")
    assert again.skipped and again.batch_id == first.batch_id and "already loaded" in again.message
    (tmp_path / "copy").mkdir()
    copy = _write(tmp_path / "copy" / "news.jsonl", BEZOS, GATES)
    assert load_corpus(fresh_target, copy, "jsonl").skipped  # the same content anywhere
    assert _count(fresh_target, "sentences") == first.counts["sentences"]
    types = _write(tmp_path / "types.tsv", "Q1\t/person", "Q2\t/organization")
    loaded = load_types(fresh_target, types, "tsv")
    _write(types, "Q1\t/person ", "Q2\t/organization", "", newline="\r\n")
    assert load_types(fresh_target, types, "tsv").skipped and _count(fresh_target, "entity_types") == 2
    assert not loaded.skipped


def test_a_file_recorded_by_the_checksum_of_its_bytes_is_still_the_same_file(fresh_target, tmp_path):
    """Batches loaded before the checksum ignored the layout hold the sha256 of the file's bytes."""
    path = _write(tmp_path / "news.jsonl", BEZOS, GATES, newline="\r\n")
    first = load_corpus(fresh_target, path, "jsonl")
    with fresh_target.connect() as conn:
        conn.execute(
            "update raw.load_batches set checksum = %s", (hashlib.sha256(path.read_bytes()).hexdigest(),)
        )
    again = load_corpus(fresh_target, path, "jsonl")
    assert again.skipped and again.batch_id == first.batch_id


# -- a mention once per document -----------------------------------------------------------------------------
def test_a_mention_listed_twice_counts_once(fresh_target, tmp_path):
    record = json.loads(BEZOS)
    record["mentions"].append(dict(record["mentions"][0]))
    summary = load_corpus(fresh_target, _write(tmp_path / "news.jsonl", json.dumps(record)), "jsonl")
    assert summary.counts["instances"] == 1 and summary.counts["mentions"] == 2
    assert summary.reader_stats["repeated_mentions"] == 1
    docs = FORMATS / "facc1_docs"
    lines = (docs / "annotations.tsv").read_text(encoding="utf-8").splitlines()
    doubled = _write(tmp_path / "annotations.tsv", lines[0], *lines)  # the first mention listed twice
    once = load_corpus(fresh_target, docs / "annotations.tsv", "facc1", corpus="once")
    twice = load_corpus(
        fresh_target, doubled, "facc1", corpus="twice", reader_options={"docs_dir": str(docs)}
    )
    assert twice.counts == once.counts and twice.reader_stats["repeated_mentions"] == 1


# -- ids in NFC, ids typed -----------------------------------------------------------------------------------
def test_entity_ids_are_compared_in_nfc(fresh_target, tmp_path):
    nfc, nfd = "Zoë_Café", unicodedata.normalize("NFD", "Zoë_Café")
    assert nfc != nfd
    path = _write(
        tmp_path / "news.jsonl",
        _line("Zoe Cafe founded Amazon in 1994.", [("Zoe Cafe", nfc), ("Amazon", "Q2")], "d1"),
        _line("Zoe Cafe founded Google in 1998.", [("Zoe Cafe", nfd), ("Google", "Q6")], "d2"),
    )
    load_corpus(fresh_target, path, "jsonl")
    assert _rows(fresh_target, "select entity_id from raw.entities where entity_id like 'Zo%'") == [(nfc,)]
    assert {r[0] for r in _rows(fresh_target, "select arg1_entity_id from raw.relation_instances")} == {nfc}
    load_types(fresh_target, _write(tmp_path / "types.tsv", f"{nfd}\t/person"), "tsv")
    assert _rows(fresh_target, "select entity_id from raw.entity_types") == [(nfc,)]


@pytest.mark.parametrize(
    ("fmt", "record", "problem"),
    [
        ("jsonl", '{"id": 7, "text": "Bob met Ann.", "mentions": []}', "field 'id' must be str, got int"),
        ("jsonl", '{"id": "", "text": "Bob met Ann.", "mentions": []}', "field 'id' is empty"),
        (
            "jsonl",
            '{"id": "a", "text": "Bob met Ann.", "id": "b", "mentions": []}',
            "key 'id' given twice in one JSON object",
        ),
        (
            "jsonl",
            '{"id": "a", "text": "Bob met Ann.", "mentions": [{"start": 0, "end": 3, "entity": 5}]}',
            "field 'entity' must be str, got int",
        ),
        ("trex", TREX_FACT.replace('"uuid": "u1"', '"uuid": 12'), "field 'uuid' must be str, got int"),
        ("conllu", CONLLU_BLOCK.replace("# sent_id = s1", "# sent_id ="), "'# sent_id' is empty"),
        ("conllu", CONLLU_BLOCK.replace("# sent_id = s1", "# sent_id"), "'# sent_id' is empty"),
    ],
    ids=[
        "integer_id",
        "empty_id",
        "key_twice",
        "integer_entity",
        "integer_uuid",
        "empty_sent_id",
        "sent_id_without_value",
    ],
)
def test_ids_are_non_empty_strings(fresh_target, tmp_path, capsys, fmt, record, problem):
    path = _write(tmp_path / "bad.jsonl", record)
    code, errors, err = _extract(fresh_target, capsys, "corpus", "--format", fmt, str(path))
    assert code == 2 and "Traceback" not in err
    assert errors == [f"error: {path}:1: {problem}"]


# -- malformed structures ------------------------------------------------------------------------------------
CYCLE = """# sent_id = c1
# text = Jeff Bezos founded Amazon.
1\tJeff\tJeff\tPROPN\tNNP\t_\t2\tcompound\t_\tEntity=B-Q1
2\tBezos\tBezos\tPROPN\tNNP\t_\t3\tnsubj\t_\tEntity=I-Q1
3\tfounded\tfound\tVERB\tVBD\t_\t4\tccomp\t_\t_
4\tAmazon\tAmazon\tPROPN\tNNP\t_\t3\tdobj\t_\tEntity=B-Q2
"""


def _fewrel(h_span: object) -> str:
    tokens = ["Bill", "Gates", "founded", "Microsoft", "."]
    return json.dumps(
        {"P112": [{"tokens": tokens, "h": ["bill gates", "Q1", h_span], "t": ["ms", "Q2", [[3]]]}]}
    )


@pytest.mark.parametrize(
    ("fmt", "content", "where", "problem"),
    [
        ("conllu", CYCLE, 5, "the heads of tokens 3 → 4 → 3 form a cycle"),
        ("fewrel", _fewrel([[1, 0]]), 1, "'h' token indices [1, 0] are not consecutive and increasing"),
        ("fewrel", _fewrel([[0, 2]]), 1, "'h' token indices [0, 2] are not consecutive and increasing"),
        ("fewrel", _fewrel([[]]), 1, "'h' token span [] is empty"),
        ("fewrel", _fewrel([]), 1, "'h' has no token span"),
    ],
    ids=["conllu_cycle_no_root", "fewrel_reversed", "fewrel_gap", "fewrel_empty_span", "fewrel_no_span"],
)
def test_malformed_trees_and_spans_are_refused(fresh_target, tmp_path, capsys, fmt, content, where, problem):
    path = tmp_path / f"bad.{fmt}"
    path.write_text(content, encoding="utf-8")
    code, errors, err = _extract(fresh_target, capsys, "corpus", "--format", fmt, str(path))
    assert code == 2 and "Traceback" not in err
    (line,) = errors
    assert line.startswith(f"error: {path}:{where}: ") and problem in line
    assert _count(fresh_target, "sentences") == 0


@pytest.mark.parametrize("fmt", ["jsonl", "fewrel", "trex"])
def test_json_nested_100k_deep_is_one_line(fresh_target, tmp_path, capsys, fmt):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    code, errors, err = _extract(fresh_target, capsys, "corpus", "--format", fmt, str(path))
    assert code == 2 and "Traceback" not in err and "RecursionError" not in err
    assert len(err.strip().splitlines()) == 1
    assert errors[0].startswith(f"error: {path}") and errors[0].endswith("JSON nested too deeply to be read")
