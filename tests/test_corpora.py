"""Corpora as a first-class idea (issue #13): named corpus batches, `sherliic-extract batches` and
`remove`, and the dbt var `corpora` with the `teg_corpora` mart.

The user's complaint pinned here: after loading another corpus, the demo's Relv moved because |E|
grew; building with `corpora: [demo]` must give the demo's Relv unchanged. Real Postgres, real dbt,
real spaCy (the loader tests).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg.rows import dict_row
from test_dbt_build import ACQUIRE, BUY, build, load_raw_graph, planted_graph

from builds.runner import run_dbt
from extract import cli
from extract.batches.store import open_batch_store
from extract.loading import load_corpus, load_types
from extract.summary import file_label
from warehouse.errors import InputError
from warehouse.target import Target

FORMATS = Path(__file__).parent / "fixtures" / "formats"
SAMPLE = FORMATS / "sample.jsonl"


def _extract(target: Target, capsys, *args: str) -> tuple[int, str, str]:
    """sherliic-extract in-process: (exit code, stdout, stderr with line wrapping undone)."""
    code = cli.main(["--database-url", target.url(), "--quiet", *args])
    captured = capsys.readouterr()
    return code, captured.out, " ".join(captured.err.split())


def _rows(target: Target, query: str, params: tuple = ()) -> list[dict]:
    with target.connect() as conn, conn.cursor(row_factory=dict_row) as cursor:
        return cursor.execute(query, params).fetchall()


def _count(target: Target, table: str) -> int:
    return _rows(target, f"select count(*) as n from raw.{table}")[0]["n"]


def _batches(target: Target, **kwargs) -> list[dict]:
    with open_batch_store(target) as store:
        return store.batches(**kwargs)


def _remove(target: Target, **kwargs):
    with open_batch_store(target) as store:
        return store.remove(**kwargs)


# -- naming --------------------------------------------------------------------------------------------
def test_a_corpus_is_named_by_the_file_stem_or_by_corpus(fresh_target, tmp_path):
    default = load_corpus(fresh_target, SAMPLE, "jsonl")
    assert default.corpus_name == "sample" and not default.skipped
    copy = tmp_path / "news-2024.jsonl"
    shutil.copy(SAMPLE, copy)
    copy.write_text(copy.read_text() + '{"id": "extra", "text": "Bob met Ann.", "mentions": []}\n')
    named = load_corpus(fresh_target, copy, "jsonl", corpus="news")
    assert named.corpus_name == "news"
    stored = _rows(fresh_target, "select batch_id, corpus_name from raw.load_batches order by batch_id")
    assert [(r["batch_id"], r["corpus_name"]) for r in stored] == [
        (default.batch_id, "sample"),
        (named.batch_id, "news"),
    ]


def test_the_same_file_is_loaded_once_whatever_the_corpus_name(fresh_target):
    first = load_corpus(fresh_target, SAMPLE, "jsonl", corpus="web")
    again = load_corpus(fresh_target, SAMPLE, "jsonl", corpus="web")
    assert again.skipped and again.batch_id == first.batch_id and "same content" in again.message
    other = load_corpus(fresh_target, SAMPLE, "jsonl", corpus="news")
    assert other.skipped and other.batch_id == first.batch_id
    assert "of corpus 'web'" in other.message and "--replace" in other.message
    moved = load_corpus(fresh_target, SAMPLE, "jsonl", corpus="news", replace=True)
    assert moved.replaced_batches == [first.batch_id]
    assert _rows(fresh_target, "select corpus_name from raw.load_batches") == [{"corpus_name": "news"}]


def test_a_bad_corpus_name_is_one_clear_error(fresh_target, tmp_path, capsys):
    code, _, err = _extract(
        fresh_target, capsys, "corpus", "--format", "jsonl", "--corpus", "my corpus", str(SAMPLE)
    )
    assert code == 2 and err.startswith(f"error: {SAMPLE}: --corpus 'my corpus' is not a corpus name")
    spaced = tmp_path / "my notes.jsonl"
    shutil.copy(SAMPLE, spaced)
    code, _, err = _extract(fresh_target, capsys, "corpus", "--format", "jsonl", str(spaced))
    assert code == 2 and "name the corpus with --corpus NAME" in err
    assert _count(fresh_target, "load_batches") == 0


def test_a_type_table_gets_an_honest_default_source(fresh_target, tmp_path):
    table = tmp_path / "types.tsv"
    table.write_text("Q3884\t/organization/company\n")
    assert load_types(fresh_target, table, "tsv").batch_id is not None
    assert _rows(
        fresh_target,
        "select type_source, corpus_name from raw.entity_types join raw.load_batches using (batch_id)",
    ) == [{"type_source": "tsv", "corpus_name": None}]


# -- listing and removing ------------------------------------------------------------------------------
@pytest.fixture()
def two_corpora(fresh_target, tmp_path) -> dict:
    """Corpus 'web' (two files), corpus 'news' (one file) and a type table, loaded with the loader."""
    second = tmp_path / "more.jsonl"
    second.write_text(
        '{"id": "m1", "text": "Microsoft acquired GitHub.", "mentions": '
        '[{"start": 0, "end": 9, "entity": "Q2283"}, {"start": 19, "end": 25, "entity": "Q364"}]}\n'
    )
    news = tmp_path / "news.jsonl"
    news.write_text(
        '{"id": "n1", "text": "Amazon hired Andy Jassy.", "mentions": '
        '[{"start": 0, "end": 6, "entity": "Q3884"}, {"start": 13, "end": 23, "entity": "Q7156"}]}\n'
    )
    types = tmp_path / "types.tsv"
    types.write_text("Q3884\t/organization/company\n")
    ids = {
        "web": [load_corpus(fresh_target, p, "jsonl", corpus="web").batch_id for p in (SAMPLE, second)],
        "news": [load_corpus(fresh_target, news, "jsonl").batch_id],
        "types": [load_types(fresh_target, types, "tsv", type_source="freebase").batch_id],
    }
    return {"target": fresh_target, "ids": ids}


def test_batches_lists_corpus_file_checksum_rows_status_and_times(two_corpora, capsys):
    target, ids = two_corpora["target"], two_corpora["ids"]
    code, out, _ = _extract(target, capsys, "batches", "--json")
    assert code == 0
    listed = json.loads(out)
    assert [(b["batch_id"], b["kind"], b["corpus_name"]) for b in listed] == [
        (ids["web"][0], "corpus", "web"),
        (ids["web"][1], "corpus", "web"),
        (ids["news"][0], "corpus", "news"),
        (ids["types"][0], "types", None),
    ]
    first = listed[0]
    assert first["source_file"].endswith("sample.jsonl") and len(first["checksum"]) == 64
    assert first["status"] == "loaded" and first["n_documents"] == 3 and first["n_instances"] > 0
    assert first["started_at"] and first["finished_at"] and listed[3]["type_source"] == "freebase"
    code, out, _ = _extract(target, capsys, "batches", "--corpus", "news")
    assert code == 0 and "news.jsonl" in out and "sample.jsonl" not in out and "loaded" in out
    assert [b["batch_id"] for b in _batches(target, kind="types")] == ids["types"]


def test_remove_by_corpus_deletes_every_row_of_its_batches(two_corpora, capsys):
    target, ids = two_corpora["target"], two_corpora["ids"]
    before = {
        t: _count(target, t) for t in ("sentences", "relation_instances", "entities", "path_rejections")
    }
    news_rows = _rows(
        target, "select count(*) as n from raw.relation_instances where batch_id = %s", (ids["news"][0],)
    )
    code, _, err = _extract(target, capsys, "remove", "--corpus", "web")
    assert code == 0 and "removed 2 batch(es)" in err and "make dbt-run" in err
    left = _rows(target, "select batch_id from raw.load_batches order by batch_id")
    assert [r["batch_id"] for r in left] == ids["news"] + ids["types"]
    for table in ("sentences", "relation_instances", "entities", "entity_types", "path_rejections"):
        orphans = _rows(
            target, f"select count(*) as n from raw.{table} where batch_id = any(%s)", (ids["web"],)
        )
        assert orphans == [{"n": 0}], table
    assert _count(target, "relation_instances") == news_rows[0]["n"] < before["relation_instances"]
    # again: an unknown corpus is an error (nothing to do is not silently fine) unless --missing-ok
    code, _, err = _extract(target, capsys, "remove", "--corpus", "web")
    assert code == 2 and "no corpus 'web'" in err and "corpora loaded: news" in err
    code, _, err = _extract(target, capsys, "remove", "--corpus", "web", "--missing-ok")
    assert code == 0 and "nothing removed" in err


def test_remove_by_batch_id(two_corpora):
    target, ids = two_corpora["target"], two_corpora["ids"]
    removed = _remove(target, batch_ids=[ids["web"][1], ids["types"][0]])
    assert [b["batch_id"] for b in removed.batches] == [ids["web"][1], ids["types"][0]]
    assert removed.rows["entity_types"] == 1 and removed.rows["relation_instances"] >= 1
    assert [b["batch_id"] for b in _batches(target)] == [ids["web"][0], ids["news"][0]]


def test_a_failing_remove_removes_nothing(two_corpora, capsys):
    target, ids = two_corpora["target"], two_corpora["ids"]
    before = {
        t: _count(target, t) for t in ("load_batches", "relation_instances", "sentences", "entity_types")
    }
    with pytest.raises(InputError, match=r"no batch 999 .*nothing removed"):
        _remove(target, batch_ids=[ids["news"][0], 999], corpora=["web"])
    code, _, err = _extract(target, capsys, "remove", str(ids["news"][0]), "--corpus", "webb")
    assert code == 2 and "no corpus 'webb'" in err and "corpora loaded: news, web" in err
    assert {t: _count(target, t) for t in before} == before


def test_a_remove_failing_half_way_rolls_back_whole(two_corpora):
    """Another session holds raw.relation_instances: the remove deletes from raw.entities and
    raw.entity_types first, then times out on the lock; everything it deleted comes back."""
    target = two_corpora["target"]
    before = {t: _count(target, t) for t in ("load_batches", "entities", "relation_instances", "sentences")}
    impatient = Target.postgres(target.url() + "&options=-c%20lock_timeout%3D300")
    with target.connect() as holder:
        holder.execute("lock table raw.relation_instances in access exclusive mode")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            _remove(impatient, corpora=["web"])
    assert {t: _count(target, t) for t in before} == before


# -- dbt: the var corpora and teg_corpora --------------------------------------------------------------
def _add_corpus(target: Target, name: str, pairs: int) -> None:
    """Another loaded corpus: `pairs` new entity pairs of one relation (|E| grows by 2·pairs)."""
    with target.connect() as conn:
        batch = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status, corpus_name, "
            "n_documents, n_instances) values (%s, 'jsonl', 'corpus', %s, 'loaded', %s, %s, %s) "
            "returning batch_id",
            (f"{name}.jsonl", name, name, pairs, pairs),
        ).fetchone()[0]
        for i in range(pairs):
            conn.execute(
                "insert into raw.relation_instances (batch_id, path, arg1_entity_id, arg2_entity_id, "
                "subject_side) values (%s, 'nsubj^-___visit___dobj', %s, %s, 1)",
                (batch, f"{name}-x{i}", f"{name}-y{i}"),
            )
        conn.commit()


def _acquire_buy_relv(target: Target) -> float:
    found = _rows(
        target,
        "select relv from warehouse.inference_candidates where premise_path = %s and hypothesis_path = %s "
        "and alignment = 'straight' order by relv desc limit 1",
        (ACQUIRE, BUY),
    )
    assert found, "the planted rule acquire => buy is not a candidate"
    return found[0]["relv"]


def _corpora_mart(target: Target) -> list[tuple]:
    rows = _rows(target, "select * from warehouse.teg_corpora order by corpus_name")
    assert all(r["built_at"] is not None for r in rows)
    return [(r["corpus_name"], r["batches"], r["documents"], r["relation_instances"]) for r in rows]


def test_corpora_selects_what_the_graph_is_built_from(make_target, tmp_path):
    target = make_target()
    load_raw_graph(target.url(), planted_graph())  # corpus 'graph', a type table and a failed corpus batch
    with target.connect() as conn:  # the planted graph is "the demo" here
        conn.execute(
            "update raw.load_batches b set corpus_name = 'demo', n_documents = 3, n_instances = "
            "(select count(*) from raw.relation_instances i where i.batch_id = b.batch_id) "
            "where corpus_name = 'graph'"
        )
        conn.commit()
    build(target.url(), tmp_path / "alone")
    alone = _acquire_buy_relv(target)
    demo_instances = len(planted_graph()["instances"])
    assert _corpora_mart(target) == [("demo", 1, 3, demo_instances)]

    _add_corpus(target, "other", pairs=200)  # |E| grows from 160 to 560
    build(target.url(), tmp_path / "all", command="run")
    assert _acquire_buy_relv(target) > alone  # the user's complaint: Relv moves with |E|
    assert _corpora_mart(target) == [("demo", 1, 3, demo_instances), ("other", 1, 200, 200)]
    n_all = _rows(target, "select count(*) as n from warehouse.relation_instances")[0]["n"]
    assert n_all == demo_instances + 200

    build(target.url(), tmp_path / "demo", {"corpora": ["demo"]})
    assert _acquire_buy_relv(target) == alone  # the demo's graph, exactly as before
    assert _corpora_mart(target) == [("demo", 1, 3, demo_instances)]
    assert _rows(target, "select count(*) as n from warehouse.relation_instances")[0]["n"] == demo_instances
    assert not _rows(target, "select 1 from warehouse.entities where source_entity_id like 'other-%%'")

    build(target.url(), tmp_path / "other", {"corpora": "other"}, command="run")  # one name as a string
    assert _corpora_mart(target) == [("other", 1, 200, 200)]


def test_an_unknown_corpus_stops_the_build_naming_the_loaded_ones(make_target, tmp_path, capfd):
    target = make_target()
    _add_corpus(target, "news", pairs=3)
    code = run_dbt(
        target,
        ["run", "--select", "teg_corpora", "--target-path", str(tmp_path / "t"), "--log-path", str(tmp_path)],
        {"corpora": ["news", "nwes"]},
        check=False,
    )
    output = " ".join(capfd.readouterr().out.split())
    assert code != 0
    assert "invalid dbt var corpora" in output and "not loaded: nwes (loaded: news;" in output
    for bad in ([], [""], 5, {"a": 1}):
        code = run_dbt(
            target,
            [
                "run",
                "--select",
                "teg_corpora",
                "--target-path",
                str(tmp_path / "t"),
                "--log-path",
                str(tmp_path),
            ],
            {"corpora": bad},
            check=False,
        )
        output = " ".join(capfd.readouterr().out.split())
        assert code != 0 and "must be null (every corpus) or a non-empty list of corpus names" in output, bad


# -- the command line ----------------------------------------------------------------------------------
def test_every_command_has_help_and_the_group_a_version():
    for command in ([], ["corpus"], ["types"], ["type-map"], ["real"], ["batches"], ["remove"], ["summary"]):
        result = subprocess.run(
            [sys.executable, "-m", "extract.cli", *command, "--help"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0 and "--database-url" in result.stdout, command
    assert (
        "--corpus NAME"
        in subprocess.run(
            [sys.executable, "-m", "extract.cli", "corpus", "--help"],
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    )
    version = subprocess.run(
        [sys.executable, "-m", "extract.cli", "--version"], capture_output=True, text=True, timeout=120
    )
    assert version.returncode == 0 and version.stdout.startswith("sherliic-extract ")


def test_database_url_after_the_command_wins(make_target, capsys):
    target = make_target()
    load_corpus(target, SAMPLE, "jsonl", corpus="web")
    unreachable = "postgresql://nobody@127.0.0.1:9/none"
    code = cli.main(["--database-url", unreachable, "batches", "--json", "--database-url", target.url()])
    out = capsys.readouterr().out
    assert code == 0 and json.loads(out)[0]["corpus_name"] == "web"


def test_engine_before_the_command_counts_for_it(capsys):
    # the group's --engine reaches the command's one Target: beside a --database-url given after the
    # command it is one clear error (a Postgres URL does not go with Spark), before anything is opened
    code = cli.main(["--engine", "spark", "batches", "--database-url", "postgresql://u@localhost/db"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert err == "error: --database-url names a Postgres database; it cannot go with --engine spark"


def test_progress_bars_name_the_file_and_the_count():
    assert file_label(3, 12, "/data/trex/P17.jsonl") == "file 3/12 P17.jsonl"
