"""Batch loading into the real embedded Postgres: counts, idempotency, replace, rollback, concurrency."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from extract.loading import load_corpus, load_type_map, load_types
from extract.summary import database_summary
from warehouse.errors import InputError
from warehouse.target import Target

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
GOOD = FIXTURES / "sample.jsonl"


def _counts(target: Target) -> dict[str, int]:
    with target.connect() as conn:
        return {
            table: conn.execute(f"select count(*) from raw.{table}").fetchone()[0]
            for table in (
                "load_batches",
                "sentences",
                "entities",
                "entity_types",
                "relation_instances",
                "path_rejections",
            )
        }


def _statuses(target: Target) -> list[tuple[int, str]]:
    with target.connect() as conn:
        return conn.execute("select batch_id, status from raw.load_batches order by batch_id").fetchall()


def test_load_jsonl_rows_and_summary(fresh_target):
    s = load_corpus(fresh_target, GOOD, "jsonl")
    assert not s.skipped and s.batch_id is not None
    assert s.counts["documents"] == 3 and s.counts["mentions"] == 8 and s.counts["entities"] == 7
    assert s.counts["instances"] == 4 and s.counts["sentences"] == 4
    with fresh_target.connect() as conn:
        rows = conn.execute(
            "select r.path, r.arg1_entity_id, r.arg2_entity_id, r.subject_side, s.text, s.line_number "
            "from raw.relation_instances r join raw.sentences s using (sentence_id) order by r.instance_id"
        ).fetchall()
        batch = conn.execute(
            "select status, n_documents, n_instances, checksum, finished_at is not null from raw.load_batches"
        ).fetchone()
        name = conn.execute("select entity_name from raw.entities where entity_id = 'Q3884'").fetchone()[0]
        types = conn.execute(
            "select entity_id, type_name, type_source from raw.entity_types order by 1"
        ).fetchall()
    assert rows[0] == (
        "nsubj^-___found___dobj",
        "Q312556",
        "Q3884",
        1,
        "Jeff Bezos founded Amazon in 1994.",
        1,
    )
    assert ("nsubj^-___acquire___dobj", "Q2283", "Q364", 1, "Microsoft acquired GitHub in 2018.", 3) in rows
    assert batch[0] == "loaded" and batch[1] == 3 and batch[2] == 4 and len(batch[3]) == 64 and batch[4]
    assert name in ("Amazon", "Amazon.com")  # one mention each: alphabetical tie-break
    assert types == [("Q312556", "/person", "corpus"), ("Q3884", "/organization/company", "corpus")]
    summary = database_summary(fresh_target)
    assert summary["paths_kept"] == 4 and summary["entities"] == 7 and summary["typed_entities"] == 2
    assert summary["typed_share"] == round(2 / 7, 4)
    assert summary["sentences_parsed"] == 4 and summary["documents"] == 3


def test_idempotent_and_replace(fresh_target):
    first = load_corpus(fresh_target, GOOD, "jsonl")
    before = _counts(fresh_target)
    again = load_corpus(fresh_target, GOOD, "jsonl")
    assert again.skipped and again.batch_id == first.batch_id and "already loaded" in again.message
    assert _counts(fresh_target) == before
    replaced = load_corpus(fresh_target, GOOD, "jsonl", replace=True)
    assert not replaced.skipped and replaced.replaced_batches == [first.batch_id]
    assert replaced.batch_id != first.batch_id
    assert _counts(fresh_target) == before  # same rows, new batch
    assert _statuses(fresh_target) == [(replaced.batch_id, "loaded")]
    # Other options (here: a document limit) are not silently treated as the same load.
    limited = load_corpus(fresh_target, GOOD, "jsonl", limit=1)
    assert limited.skipped and "other options" in limited.message


BAD_CASES = {
    "malformed": ('{"id": "x", "text": "Bob met Ann.", "mentions": [', "malformed JSON"),
    "bad_offsets": (
        '{"id": "x", "text": "Bob met Ann.", "mentions": [{"start": 8, "end": 40, "entity": "a"}]}',
        "outside the text",
    ),
    "misaligned": (
        '{"id": "x", "text": "Bob met Ann.", "mentions": [{"start": 0, "end": 2, "entity": "a"}, '
        '{"start": 8, "end": 11, "entity": "b"}]}',
        "token boundaries",
    ),
    "missing_field": ('{"id": "x", "mentions": []}', "missing field 'text'"),
}


@pytest.mark.parametrize("case", [*BAD_CASES, "encoding"])
def test_bad_input_rolls_back_the_whole_batch(fresh_target, tmp_path, case):
    earlier = load_corpus(fresh_target, GOOD, "jsonl")
    before = _counts(fresh_target)
    path = tmp_path / f"{case}.jsonl"
    good_lines = GOOD.read_bytes().replace(b'"d', b'"other-d')  # valid lines first: they must not stay
    if case == "encoding":
        path.write_bytes(good_lines + b'{"id": "x", "text": "M\xfcller met Ann.", "mentions": []}\n')
        problem, line = "not valid UTF-8", 5
    else:
        bad, problem = BAD_CASES[case]
        path.write_bytes(good_lines + bad.encode() + b"\n")
        line = 5
    with pytest.raises(InputError) as err:
        load_corpus(fresh_target, path, "jsonl")
    assert err.value.file == str(path) and err.value.line == line and problem in err.value.problem
    after = _counts(fresh_target)
    assert {k: v for k, v in after.items() if k != "load_batches"} == {
        k: v for k, v in before.items() if k != "load_batches"
    }
    statuses = _statuses(fresh_target)
    assert statuses[0] == (earlier.batch_id, "loaded")
    assert [s for _, s in statuses[1:]] == ["failed"]  # no 'loading' row left behind
    with fresh_target.connect() as conn:
        options = conn.execute("select options from raw.load_batches where status = 'failed'").fetchone()[0]
    assert problem in options["error"]


def test_empty_and_missing_files(fresh_target, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="file is empty"):
        load_corpus(fresh_target, empty, "jsonl")
    with pytest.raises(InputError, match="file not found"):
        load_corpus(fresh_target, tmp_path / "nope.jsonl", "jsonl")
    blank = tmp_path / "blank.txt"
    blank.write_text("\n\n")
    with pytest.raises(InputError, match="no documents"):
        load_corpus(fresh_target, blank, "text")
    assert _counts(fresh_target)["sentences"] == 0


def test_skip_bad_counts_bad_lines(fresh_target, tmp_path):
    path = tmp_path / "mixed.jsonl"
    lines = GOOD.read_text().splitlines()
    path.write_text(
        "\n".join([lines[0], "{broken", BAD_CASES["bad_offsets"][0], BAD_CASES["misaligned"][0], lines[3]])
        + "\n"
    )
    s = load_corpus(fresh_target, path, "jsonl", skip_bad=True)
    assert s.counts["bad_lines"] == 3 and s.counts["documents"] == 2
    assert s.counts["instances"] == 2
    assert [m.split(": ")[0] for m in s.bad_lines] == [f"{path}:2", f"{path}:3", f"{path}:4"]
    with fresh_target.connect() as conn:
        n_bad, options = conn.execute("select n_bad_lines, options from raw.load_batches").fetchone()
    assert n_bad == 3 and len(options["bad_lines"]) == 3


def _load_in_process(target: Target, path: str, start, queue) -> None:
    start.wait()
    summary = load_corpus(target, path, "jsonl")
    queue.put((summary.batch_id, summary.skipped))


def test_two_concurrent_loads_of_one_file_load_it_once(fresh_target, tmp_path):
    # A larger file so the first load is still running when the second one asks for the lock.
    path = tmp_path / "big.jsonl"
    record = json.loads(GOOD.read_text().splitlines()[0])
    path.write_text("".join(json.dumps({**record, "id": f"d{i}"}) + "\n" for i in range(300)))
    ctx = multiprocessing.get_context("spawn")
    start, queue = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_load_in_process, args=(fresh_target, str(path), start, queue)) for _ in range(2)
    ]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    results = sorted(queue.get(timeout=5) for _ in procs)
    assert [skipped for _, skipped in results].count(True) == 1
    assert results[0][0] == results[1][0]
    assert _statuses(fresh_target) == [(results[0][0], "loaded")]
    assert _counts(fresh_target)["relation_instances"] == 300


def test_processes_two_gives_the_same_rows(fresh_target, tmp_path):
    one = load_corpus(fresh_target, GOOD, "jsonl")
    copy = tmp_path / "copy.jsonl"
    # other content (a leading blank line; a trailing one would be the same content), same documents
    copy.write_text("\n" + GOOD.read_text())
    two = load_corpus(fresh_target, copy, "jsonl", processes=2)
    assert two.counts == one.counts and two.rejections == one.rejections


def test_conllu_and_facc1_load(fresh_target):
    c = load_corpus(fresh_target, FIXTURES / "sample.conllu", "conllu")
    assert c.counts["instances"] == 3 and c.rejections == {"rule1_subject_end": 1}
    f = load_corpus(fresh_target, FIXTURES / "facc1_docs" / "annotations.tsv", "facc1")
    assert f.counts["documents"] == 2 and f.counts["entities"] == 5 and f.counts["instances"] >= 2
    with fresh_target.connect() as conn:
        paths = {
            r[0]
            for r in conn.execute(
                "select path from raw.relation_instances where batch_id = %s", (f.batch_id,)
            )
        }
    assert "nsubj^-___visit___dobj" in paths


def test_limit_applies_to_a_file_with_its_own_parses(fresh_target):
    # CoNLL-U brings its parses (no spaCy): --limit still reads at most N documents, as on Spark
    s = load_corpus(fresh_target, FIXTURES / "sample.conllu", "conllu", limit=1)
    assert s.counts["documents"] == 1 and s.reader_stats["sentences_parsed"] == 1


def test_text_format_ner_mentions_and_types(fresh_target):
    s = load_corpus(fresh_target, FIXTURES / "sample.txt", "text")
    with fresh_target.connect() as conn:
        rows = conn.execute(
            "select path, arg1_entity_id, arg2_entity_id from raw.relation_instances"
        ).fetchall()
        types = dict(
            conn.execute("select entity_id, type_name from raw.entity_types where type_source = 'ner'")
        )
    assert ("nsubj^-___meet___dobj", "barack obama", "angela merkel") in rows
    assert types["angela merkel"] == "PERSON" and types["microsoft"] == "ORG"
    assert s.counts["typed_entities"] == s.counts["entities"]


def test_ner_types_and_mentions_for_linked_corpora(fresh_target, tmp_path):
    path = tmp_path / "linked.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "a",
                "text": "Barack Obama met Angela Merkel in Berlin.",
                "mentions": [
                    {"start": 0, "end": 12, "entity": "Q76"},
                    {"start": 17, "end": 30, "entity": "Q567"},
                ],
            }
        )
        + "\n"
    )
    s = load_corpus(fresh_target, path, "jsonl", ner_types=True, ner_mentions=True)
    with fresh_target.connect() as conn:
        types = set(conn.execute("select entity_id, type_name, type_source from raw.entity_types"))
        args = set(conn.execute("select arg1_entity_id, arg2_entity_id from raw.relation_instances"))
    assert {("Q76", "PERSON", "ner"), ("Q567", "PERSON", "ner"), ("berlin", "GPE", "ner")} <= types
    assert ("Q76", "Q567") in args and s.counts["mentions"] == 3


def test_type_tables_and_map(fresh_target, tmp_path):
    tsv = tmp_path / "types.tsv"
    tsv.write_text(
        "entity\ttype\n/m/0d6lp\t/location/citytown\n/m/0d6lp\t/location/location\n"
        "/m/0d6lp\t/location/citytown\n"
    )
    s = load_types(fresh_target, tsv, "tsv")
    assert s.counts["rows"] == 2 and s.counts["typed_entities"] == 1
    assert load_types(fresh_target, tsv, "tsv").skipped
    fmap = tmp_path / "types.map"
    fmap.write_text("/people/person\t/person\n/location/citytown\t/location/city\n")
    m = load_type_map(fresh_target, fmap)
    assert m.counts["rows"] == 2
    bad = tmp_path / "bad.tsv"
    bad.write_text("/m/1\t/a\n/m/2 /b\n")
    with pytest.raises(InputError) as err:
        load_types(fresh_target, bad, "tsv")
    assert err.value.line == 2
    with fresh_target.connect() as conn:
        assert conn.execute("select count(*) from raw.entity_types").fetchone()[0] == 2
        assert conn.execute("select count(*) from raw.type_mappings").fetchone()[0] == 2


@pytest.mark.parametrize("case", ["malformed", "misaligned"])
def test_bad_input_with_two_processes_fails_cleanly(fresh_target, tmp_path, case):
    # spaCy's multiprocess pipe hangs if its input raises: the loader must stop feeding and re-raise.
    record = json.loads(GOOD.read_text().splitlines()[0])
    path = tmp_path / f"{case}.jsonl"
    good = "".join(json.dumps({**record, "id": f"d{i}"}) + "\n" for i in range(150))
    path.write_text(good + BAD_CASES[case][0] + "\n" + good)
    with pytest.raises(InputError) as err:
        load_corpus(fresh_target, path, "jsonl", processes=2)
    assert err.value.line == 151 and BAD_CASES[case][1] in err.value.problem
    assert [s for _, s in _statuses(fresh_target)] == ["failed"]
    assert _counts(fresh_target)["relation_instances"] == 0
