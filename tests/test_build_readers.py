"""Everything downstream follows the build it is given, and only reads it: on one database with two builds
(the default build of one corpus, the named build `both` of two), real dbt builds, real Postgres.

- read_sql resolves unqualified mart names in the build read (search path), and refuses, in one line, a
  query that names another build's schema while the build is chosen;
- ranking (`sherliic-lm rank --build NAME`, `make rank BUILD=NAME`) scores that build's candidates, keys
  the scores to its record, adds no build record and leaves `sherliic-dbt builds --diff` as it was; the
  mart candidate_verifier_scores (a view) shows the scores without a dbt run, and a later build that
  replaces the candidates still publishes;
- each build's export goes to its own folder (out/export/<build>/); replacing another build's export in
  a folder given with --out is said.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from psycopg.rows import dict_row
from test_corpora import _add_corpus
from test_dbt_build import load_raw_graph, planted_graph
from test_lm_rank import bench_verifier, needs_lm

from builds.records import current_build
from warehouse.api import QueryRefused, open_warehouse, read_mart, read_sql
from warehouse.query_guard import schema_references
from warehouse.settings import PROJECT_ROOT
from warehouse.target import Target, build_of_schema

BIN = Path(sys.executable).parent
TEG = ["--select", "tag:teg"]


def sherliic(command: str, target: Target, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / command), *args],
        env={**target.environment(), **env},
        capture_output=True,
        text=True,
        timeout=900,
    )


def records(target: Target) -> list[dict]:
    with target.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("select * from builds.builds order by build_id").fetchall()


@pytest.fixture(scope="module")
def two_builds(make_target) -> Target:
    """One database, two corpora (the planted graph `graph`, and `other`), two builds: the default one
    of `graph` alone, the named build `both` of both corpora."""
    target = make_target()
    load_raw_graph(target.url(), planted_graph())
    _add_corpus(target, "other", pairs=200)
    for args in (["--vars", "{corpora: [graph]}"], ["--build", "both"]):
        built = sherliic("sherliic-dbt", target, "run", *TEG, *args)
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr
    return target


# -- read_sql follows the build ------------------------------------------------------------------------


def test_unqualified_names_are_the_marts_of_the_build_read(two_builds: Target) -> None:
    target = two_builds
    corpora = "select corpus_name from teg_corpora order by 1"
    assert list(read_sql(corpora, target=target, build="both").corpus_name) == ["graph", "other"]
    assert list(read_sql(corpora, target=target, build="default").corpus_name) == ["graph"]
    assert list(read_sql(corpora, target=target).corpus_name) == ["graph"]  # no build: the default one
    assert list(read_sql(corpora, target=target.with_build("both")).corpus_name) == ["graph", "other"]
    for build in ("default", "both"):
        counted = read_sql("select count(*) as n from inference_candidates", target=target, build=build)
        assert counted.n[0] == len(read_mart("inference_candidates", target=target, build=build)) > 0
    with open_warehouse(target, build="both") as wh:
        assert len(wh.read_sql("select * from rules")) == len(wh.read_mart("rules"))
        assert wh.read_sql("select count(*) as n from build_both.teg_corpora").n[0] == 2  # its own schema
        # the schemas that are no build's stay readable
        assert wh.read_sql("select count(*) as n from raw.load_batches").n[0] >= 2
        assert wh.read_sql('select count(*) as n from "builds".builds').n[0] >= 2
        assert wh.read_sql("select count(*) as n from results.verifier_scores").n[0] >= 0
    # without a chosen build a query may compare builds, naming both schemas
    both_counts = read_sql(
        "select (select count(*) from warehouse.teg_corpora) as one, "
        "(select count(*) from build_both.teg_corpora) as two",
        target=target,
    )
    assert both_counts.to_dict("records") == [{"one": 1, "two": 2}]


def test_the_search_path_keeps_the_urls_own_options(two_builds: Target) -> None:
    url = (
        two_builds.url() + ("&" if "?" in two_builds.url() else "?") + "options=-c%20statement_timeout%3D4321"
    )
    with open_warehouse(database_url=url, build="both") as wh:
        assert wh.read_sql("show search_path").iloc[0, 0] == "build_both,public"
        assert wh.read_sql("show statement_timeout").iloc[0, 0] == "4321ms"
        assert wh.read_sql("select count(*) as n from teg_corpora").n[0] == 2


@pytest.mark.parametrize(
    ("build", "query", "other"),
    [
        ("both", "select count(*) n from warehouse.rules", "warehouse (build default)"),
        ("both", 'select count(*) n from "warehouse".rules', "warehouse (build default)"),
        ("both", "select count(*) n from WAREHOUSE . /* c */ rules", "warehouse (build default)"),
        (
            "both",
            "select r.* from rules r join warehouse.rules w using (rule_key)",
            "warehouse (build default)",
        ),
        ("default", "select count(*) n from build_both.rules", "build_both (build both)"),
        ("default", 'select count(*) n from "build_both"."rules"', "build_both (build both)"),
    ],
)
def test_a_query_naming_another_builds_schema_is_refused_in_one_line(
    two_builds: Target, build: str, query: str, other: str
) -> None:
    with pytest.raises(QueryRefused) as refused:
        read_sql(query, target=two_builds, build=build)
    message = str(refused.value)
    schema = "build_both" if build == "both" else "warehouse"
    assert message.startswith(f"this read is of build {build} (schema {schema}), but the query names")
    assert other in message and "leave the schema out" in message and "\n" not in message


def test_strings_comments_and_other_names_are_not_schemas(two_builds: Target) -> None:
    frame = read_sql(
        'select \'warehouse.rules\' as s, "warehouse" from (select 1 as "warehouse") as t -- warehouse.x',
        target=two_builds,
        build="both",
    )
    assert frame.to_dict("records") == [{"s": "warehouse.rules", "warehouse": 1}]


def test_schema_references_and_the_builds_they_name() -> None:
    assert schema_references('select a.x, "B"."c".d from s.t as a', "postgres") == ["a", "B", "c", "s"]
    assert schema_references("select 1.5, e'warehouse.x' /* build_x.y */ from t", "postgres") == []
    assert schema_references('select * from `Build_X`.t, "warehouse.t"', "spark") == ["build_x"]
    assert schema_references("select $$warehouse.x$$, $q$ build_a.b $q$", "postgres") == []
    assert [build_of_schema(s) for s in ("warehouse", "build_x", "build_x__next", "raw", "build_", "B")] == [
        "default", "x", "x", None, None, None,
    ]  # fmt: skip


# -- ranking reads its build and records nothing ----------------------------------------------------------


def test_rank_takes_a_build(two_builds: Target) -> None:
    shown = subprocess.run(
        ["make", "-n", "rank", "BUILD=both"], capture_output=True, text=True, cwd=PROJECT_ROOT
    )
    assert shown.returncode == 0 and "sherliic-lm rank --build both" in " ".join(shown.stdout.split())
    helped = sherliic("sherliic-lm", two_builds, "rank", "--help")
    assert "--build NAME" in helped.stdout and "--mart" not in helped.stdout
    # the build is checked before a verifier is trained: one line naming it
    missing = sherliic("sherliic-lm", two_builds, "rank", "--build", "nosuch", "--no-train")
    assert missing.returncode == 2 and missing.stdout == "" and missing.stderr.count("\n") == 1
    assert (
        "no inference_candidates in" in missing.stderr
        and "build nosuch (schema build_nosuch)" in missing.stderr
    )
    assert "sherliic-dbt run --build nosuch" in missing.stderr


@needs_lm
@pytest.mark.slow
def test_ranking_a_named_build_adds_no_record_and_the_view_shows_its_scores(
    two_builds: Target, lm_cache: Path, tmp_path: Path
) -> None:
    from lm.rank.cli import rank_build
    from lm.rank.ranking import RankSettings

    target, both = two_builds, two_builds.with_build("both")
    before = records(target)
    diff_before = sherliic("sherliic-dbt", target, "builds", "--diff", "default", "both")
    assert diff_before.returncode == 0, diff_before.stderr
    record = current_build(both)
    assert record is not None and record.build_name == "both"

    verifier = bench_verifier(lm_cache)
    settings = RankSettings(backend="onnx-fp32", threads=1, cache_dir=lm_cache, show_progress=False)
    summary = rank_build(
        both, verifier, settings, out=tmp_path, plot=True
    )  # what `make rank BUILD=both` runs
    n_both = len(read_mart("inference_candidates", target=target, build="both"))
    assert (summary.build, summary.build_id) == ("both", record.build_id)
    assert summary.scored == summary.candidates == n_both > 0
    assert (
        json.loads((tmp_path / "rank" / "both" / f"{verifier.key}-onnx-fp32.json").read_text())["build_id"]
        == record.build_id
    )

    # no build record made or changed; the builds compare as before
    assert records(target) == before
    diff_after = sherliic("sherliic-dbt", target, "builds", "--diff", "default", "both")
    assert (diff_after.returncode, diff_after.stdout) == (0, diff_before.stdout)

    # the scores: keyed to the build and its record
    keys = read_sql(
        "select build, build_id, count(*) as n from results.verifier_scores where verifier_key = %s "
        "group by build, build_id",
        [verifier.key],
        target=target,
    )
    assert keys.to_dict("records") == [{"build": "both", "build_id": record.build_id, "n": n_both}]

    # the mart is a view: the build's scores, now, without a dbt run; the default build has none
    mart = read_mart("candidate_verifier_scores", target=target, build="both")
    assert len(mart) == mart.candidate_key.nunique() == n_both and mart.verifier_score.between(0, 1).all()
    assert read_mart("candidate_verifier_scores", target=target).empty

    # a build that replaces the candidates the view reads still publishes, and the view follows it
    rebuilt = sherliic("sherliic-dbt", target, "run", "--build", "both", *TEG)
    assert rebuilt.returncode == 0, rebuilt.stdout[-3000:] + rebuilt.stderr
    assert len(read_mart("candidate_verifier_scores", target=target, build="both")) == n_both
    with target.connect() as conn:
        kind = conn.execute(
            "select relkind from pg_class where oid = 'build_both.candidate_verifier_scores'::regclass"
        )
        assert kind.fetchone()[0] == "v"


# -- each build's export in its own folder ----------------------------------------------------------------


def test_each_builds_export_goes_to_its_own_folder(two_builds: Target, tmp_path: Path) -> None:
    target = two_builds
    for build in ("both", "default"):
        args = ["--build", build] if build != "default" else []
        done = sherliic("sherliic-export", target, *args, SHERLIIC_OUT=str(tmp_path))
        assert done.returncode == 0, done.stderr
        assert "note:" not in done.stdout
    for build in ("both", "default"):
        manifest = json.loads((tmp_path / "export" / build / "manifest.json").read_text())
        assert manifest["build"] == build
    assert not (tmp_path / "export" / "manifest.json").exists()

    # one folder given for two builds: the second says whose export it replaced
    shared = tmp_path / "release"
    first = sherliic("sherliic-export", target, "--out", str(shared))
    second = sherliic("sherliic-export", target, "--out", str(shared), "--build", "both")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert "note:" not in first.stdout
    assert f"note: {shared} held the export of build default; it now holds build both's" in second.stdout
    assert json.loads((shared / "manifest.json").read_text())["build"] == "both"


def test_make_export_passes_the_build_and_the_folder() -> None:
    def planned(*args: str) -> str:
        shown = subprocess.run(
            ["make", "-n", "--no-print-directory", "export", *args],
            capture_output=True,
            text=True,
            cwd=PROJECT_ROOT,
        )
        assert shown.returncode == 0, shown.stderr
        return " ".join(shown.stdout.split())

    assert planned("BUILD=x").endswith("sherliic-export --build x")
    assert planned().endswith("sherliic-export")
    assert planned("OUT=somewhere", "BUILD=x").endswith("sherliic-export --out somewhere --build x")
