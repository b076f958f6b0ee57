"""The Python API (warehouse/api.py) and the example that uses it (examples/query_marts.py), on a real
Postgres warehouse built by dbt from the planted graph of tests/test_dbt_build.py."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import psycopg
import pytest

import warehouse
from builds.runner import dbt_executable, run_dbt
from tests.test_dbt_build import BUY, BUY_FROM, SELL_TO, build, load_raw_graph, planted_graph
from warehouse.api import (
    CORPORA_MART,
    CorporaMismatch,
    MartError,
    check_corpora,
    list_marts,
    open_warehouse,
    read_mart,
    read_sql,
    rebuild_command,
)
from warehouse.errors import DatabaseUnavailable
from warehouse.server import with_database
from warehouse.settings import DBT_PROJECT_DIR, PROJECT_ROOT
from warehouse.target import Target


@pytest.fixture(scope="module")
def built(make_target, tmp_path_factory) -> Iterator[str]:
    """The planted graph's TEG and InfCands (tag:teg), built once for the module."""
    url = make_target().url()
    load_raw_graph(url, planted_graph())
    build(url, tmp_path_factory.mktemp("dbt"))
    yield url


def sql_rows(url: str, query: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(query, params).fetchall()


def test_the_api_is_reexported_from_the_package() -> None:
    assert warehouse.read_mart is read_mart and warehouse.list_marts is list_marts
    assert warehouse.open_warehouse is open_warehouse and warehouse.read_sql is read_sql
    with pytest.raises(AttributeError):
        warehouse.no_such_function  # noqa: B018


def test_list_marts_are_the_dbt_projects_mart_models() -> None:
    marts = list_marts()
    on_disk = {path.stem for path in (DBT_PROJECT_DIR / "models" / "marts").rglob("*.sql")}
    assert marts == sorted(on_disk)
    assert {"inference_candidates", "typed_relations", "relations", "teg_edges", "entities"} <= set(marts)


def test_read_mart_returns_the_whole_mart(built: str) -> None:
    frame = read_mart("inference_candidates", database_url=built)
    columns = [
        row[0]
        for row in sql_rows(
            built,
            "select column_name from information_schema.columns "
            "where table_schema = 'warehouse' and table_name = 'inference_candidates' "
            "order by ordinal_position",
        )
    ]
    assert list(frame.columns) == columns
    assert len(frame) == sql_rows(built, "select count(*) from warehouse.inference_candidates")[0][0] > 0
    assert pd.api.types.is_float_dtype(frame["relv"]) and pd.api.types.is_integer_dtype(frame["overlap_size"])


def test_read_mart_selects_filters_sorts_and_limits(built: str) -> None:
    crossed = read_mart(
        "inference_candidates",
        columns=["hypothesis_path", "alignment", "score"],
        where="premise_path = %s",
        params=[SELL_TO],
        order_by="score desc",
        database_url=built,
    )
    assert list(crossed.columns) == ["hypothesis_path", "alignment", "score"]
    assert set(crossed["hypothesis_path"]) == {BUY_FROM} and set(crossed["alignment"]) == {"crossed"}
    assert list(crossed["score"]) == sorted(crossed["score"], reverse=True)
    like = read_mart(
        "relations", columns=["path"], where="path like %s", params=["%buy%"], database_url=built
    )
    assert set(like["path"]) == {BUY, BUY_FROM}
    top = read_mart(
        "inference_candidates", columns=["score"], order_by="score desc", limit=1, database_url=built
    )
    assert (
        len(top) == 1
        and top["score"][0] == sql_rows(built, "select max(score) from warehouse.inference_candidates")[0][0]
    )
    assert read_mart("relations", limit=0, database_url=built).empty


def test_read_sql_and_one_connection_for_many_reads(built: str) -> None:
    frame = read_sql(
        "select path, n_entity_pairs from warehouse.relations where path = %s", [BUY], database_url=built
    )
    assert frame.to_dict("records") == [{"path": BUY, "n_entity_pairs": 8}]
    with open_warehouse(database_url=built) as wh:
        assert wh.engine == "postgres" and wh.has_mart("relations") and not wh.has_mart("annotation_split")
        assert "premise_path" in wh.columns("inference_candidates")
        assert len(wh.read_mart("relations")) == len(wh.read_sql("select * from warehouse.relations"))


def test_mistakes_are_one_clear_error(built: str) -> None:
    with pytest.raises(
        MartError,
        match=r"unknown mart 'inference_candidate'; the marts: annotation_item_labels, .*, inference_cand",
    ):
        read_mart("inference_candidate", database_url=built)
    with pytest.raises(MartError, match=r"mart relations has no column 'pth'; its columns: rel_id, path, "):
        read_mart("relations", columns=["path", "pth"], database_url=built)
    with pytest.raises(
        MartError, match=r"mart annotation_split has not been built in this warehouse .*sherliic-dbt build"
    ):
        read_mart("annotation_split", database_url=built)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="limit must be a non-negative integer"):
            read_mart("relations", limit=bad, database_url=built)
    with pytest.raises(DatabaseUnavailable, match="sherliic_test_no_such_database"):
        read_mart("relations", database_url=with_database(built, "sherliic_test_no_such_database"))


def test_check_corpora_compares_sets_and_names_the_rebuild_command() -> None:
    check_corpora(["trex", "fewrel"], ["fewrel", "trex"])  # order and repeats do not matter
    check_corpora(["fewrel", "fewrel"], ["fewrel"])
    for requested, built in ((["fewrel"], ["fewrel", "trex"]), (["fewrel", "trex"], ["fewrel"]), ([], ["x"])):
        with pytest.raises(CorporaMismatch) as caught:
            check_corpora(requested, built)
        assert caught.value.requested == sorted(set(requested)) and caught.value.built == sorted(set(built))
        assert rebuild_command(requested) in str(caught.value)
    with pytest.raises(TypeError, match="corpora must be a list of corpus names, got the string 'trex'"):
        check_corpora("trex", ["trex"])
    assert (
        rebuild_command(["trex", "fewrel"]) == 'sherliic-dbt build --vars \'{corpora: ["fewrel", "trex"]}\''
    )
    message = str(CorporaMismatch(["a"], ["b", "c"]))
    assert message == (
        "the warehouse was built from corpora [b, c], not [a]; "
        "rebuild it with: sherliic-dbt build --vars '{corpora: [\"a\"]}'"
    )


def test_corpora_without_the_corpora_mart_is_a_clear_error(fresh_target: Target) -> None:
    # a warehouse built before teg_corpora existed (here: nothing built at all)
    with pytest.raises(
        MartError, match=f"no mart warehouse.{CORPORA_MART}, so the corpora it was built from"
    ):
        read_mart("relations", corpora=["demo"], target=fresh_target)


@pytest.mark.skipif(
    CORPORA_MART not in list_marts(), reason=f"the dbt project has no mart {CORPORA_MART} yet"
)
def test_corpora_are_checked_against_the_build(built: str) -> None:
    corpora = list(read_mart(CORPORA_MART, database_url=built)["corpus_name"])
    assert corpora, "the planted graph's corpus batch must be listed"
    same = read_mart("relations", corpora=corpora, database_url=built)
    assert len(same) == len(read_mart("relations", database_url=built))
    with pytest.raises(CorporaMismatch, match="rebuild it with: sherliic-dbt build --vars"):
        read_mart("relations", corpora=[*corpora, "another_corpus"], database_url=built)


def run_example(database_url: str, out: Path, *options: str) -> subprocess.CompletedProcess:
    """examples/query_marts.py as a user runs it."""
    script = PROJECT_ROOT / "examples" / "query_marts.py"
    command = [sys.executable, str(script), "--database-url", database_url, "--out", str(out), *options]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_example_script_runs_on_a_built_warehouse(built: str, tmp_path) -> None:
    completed = run_example(built, tmp_path, "--top", "5")
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    print(out)
    assert "Top 5 inference candidates:" in out and "inference_candidates" in out
    best = read_mart(
        "inference_candidates", order_by="score desc, candidate_key", limit=1, database_url=built
    )
    assert f"Why {best['premise_path'][0]} ⇒ {best['hypothesis_path'][0]}" in out
    assert (tmp_path / "candidate_scores.png").stat().st_size > 1000


def test_example_script_explains_crossed_candidates(built: str) -> None:
    sys.path.insert(0, str(PROJECT_ROOT / "examples"))
    try:
        from query_marts import supporting_sentences
    finally:
        sys.path.pop(0)
    with open_warehouse(database_url=built) as wh:
        crossed = wh.read_mart(
            "inference_candidates",
            where="premise_path = %s and hypothesis_path = %s",
            params=[SELL_TO, BUY_FROM],
            order_by="score desc",
            limit=1,
        ).iloc[0]
        why = supporting_sentences(wh, crossed)
    # x sold to y  ⇒  y bought from x: every pair (S_i, P_i) with both sentences
    assert len(why) == 6
    for row in why.itertuples():
        i = row.x.removeprefix("name of S")
        assert row.y == f"name of P{i}"
        assert row.premise == f"S{i} sold to P{i}." and row.hypothesis == f"P{i} bought from S{i}."


def test_example_script_fails_in_one_line_without_marts(fresh_target: Target, tmp_path) -> None:
    completed = run_example(fresh_target.url(), tmp_path)
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == [
        "error: mart inference_candidates has not been built in this warehouse (postgres); build it with "
        "sherliic-dbt build (make demo builds the demo warehouse)"
    ]


def column_comments(url: str, table: str) -> dict[str, str | None]:
    """Column name -> Postgres comment (persist_docs writes the YAML descriptions) of warehouse.<table>."""
    rows = sql_rows(
        url,
        "select a.attname, col_description(a.attrelid, a.attnum) from pg_attribute a "
        "where a.attrelid = %s::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum",
        (f"warehouse.{table}",),
    )
    return dict(rows)


def test_column_docs_are_postgres_comments(built: str) -> None:
    """persist_docs: every column of inference_candidates has its YAML description as a comment, and the
    table its model description, after the build was published from warehouse__next."""
    comments = column_comments(built, "inference_candidates")
    assert comments and [name for name, comment in comments.items() if not comment] == []
    assert comments["relv"] == "Relv(A,B) = |A∩B|·|E|² / (|A|·|B|)"
    table = sql_rows(built, "select obj_description('warehouse.inference_candidates'::regclass, 'pg_class')")
    assert table[0][0].startswith("SherLIiC's InfCands")
    view = sql_rows(
        built,
        "select col_description(attrelid, attnum) from pg_attribute "
        "where attrelid = 'warehouse.relation_instances'::regclass and attname = 'sentence_text'",
    )
    assert view[0][0] == "The sentence the instance was extracted from."


def test_every_mart_column_is_described(fresh_target: Target, tmp_path) -> None:
    """Every column of every mart, as dbt builds it, has a YAML description (so a new column cannot go
    undocumented), and every described column exists. `dbt run --empty` builds all models with no rows:
    the columns are those the SQL really selects, whatever the data."""
    target = tmp_path / "target"
    run_dbt(fresh_target, ["run", "--empty", "--target-path", str(target), "--log-path", str(tmp_path)])
    manifest = json.loads((target / "manifest.json").read_text())
    undocumented, stale = [], []
    for mart in list_marts():
        comments = column_comments(fresh_target.url(), mart)
        assert comments, f"mart {mart} was not built"
        undocumented += [f"{mart}.{name}" for name, text in comments.items() if not (text or "").strip()]
        described = manifest["nodes"][f"model.sherliic.{mart}"]["columns"]
        stale += [f"{mart}.{name}" for name in described if name not in comments]
    assert undocumented == [], "columns without a description in their model's YAML"
    assert stale == [], "YAML columns the model does not select"


def test_dbt_docs_generate_and_serve_on_localhost(built: str, tmp_path) -> None:
    """`make dbt-docs`: the catalog carries the comments; the site is served on 127.0.0.1, offline."""
    target = tmp_path / "target"
    generate = ["docs", "generate", "--target-path", str(target), "--log-path", str(tmp_path)]
    run_dbt(Target.postgres(built), generate, {"docs_catalog": True})
    catalog = json.loads((target / "catalog.json").read_text())
    node = catalog["nodes"]["model.sherliic.inference_candidates"]
    assert node["metadata"]["comment"].startswith("SherLIiC's InfCands")
    assert node["columns"]["relv"]["comment"] == "Relv(A,B) = |A∩B|·|E|² / (|A|·|B|)"
    # the next parse (no docs_catalog) in the same target folder builds into the staging schema again
    run_dbt(Target.postgres(built), ["parse", "--target-path", str(target), "--log-path", str(tmp_path)])
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["nodes"]["model.sherliic.inference_candidates"]["schema"] == "warehouse__next"
    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    project = str(DBT_PROJECT_DIR)
    command = [dbt_executable(), "docs", "serve", "--host", "127.0.0.1", "--port", str(port), "--no-browser"]
    command += ["--project-dir", project, "--profiles-dir", project, "--target-path", str(target)]
    serving = subprocess.Popen(
        command, env=Target.postgres(built).dbt_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/catalog.json", timeout=5) as response:
                    assert json.load(response)["nodes"].keys() == catalog["nodes"].keys()
                break
            except OSError:
                assert serving.poll() is None, serving.stderr.read().decode()
                assert time.monotonic() < deadline, "dbt docs serve did not answer within 60 s"
                time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            assert response.status == 200 and b"dbt" in response.read()
    finally:
        serving.terminate()
        serving.wait(timeout=30)


def test_a_build_with_docs_catalog_is_refused(built: str, tmp_path, capfd) -> None:
    build_args = [
        "build",
        "--select",
        "relations",
        "--target-path",
        str(tmp_path),
        "--log-path",
        str(tmp_path),
    ]
    assert run_dbt(Target.postgres(built), build_args, {"docs_catalog": True}, check=False) != 0
    assert "docs_catalog is for `dbt docs generate` only" in capfd.readouterr().out
    assert run_dbt(Target.postgres(built), build_args, {"docs_catalog": "yes"}, check=False) != 0
    assert "invalid dbt var docs_catalog" in capfd.readouterr().out
