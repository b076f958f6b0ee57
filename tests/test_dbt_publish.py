"""A dbt build is all or nothing (issue #12, item 3), on the real embedded Postgres with real dbt.

- every var is checked before any model runs (macros/validate_vars.sql): one line naming the var, the
  value and what is allowed, and the published marts stay as they were;
- models are built into warehouse__next and published in one transaction only when every node of the
  invocation succeeded (macros/atomic_publish.sql): a model or a data test failing half-way leaves the
  previous marts in place and consistent.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest
from test_dbt_build import load_raw_graph, planted_graph

from builds.runner import run_dbt
from warehouse.settings import DBT_PROJECT_DIR
from warehouse.target import Target

TEG = ["--select", "tag:teg"]


def dbt(
    url: str, args: list[str], tmp: Path, dbt_vars: dict | None = None, project_dir: Path = DBT_PROJECT_DIR
) -> int:
    """dbt <args> with private target/log folders; returns the exit code."""
    private = ["--target-path", str(tmp / "target"), "--log-path", str(tmp / "logs")]
    return run_dbt(Target.postgres(url), [*args, *private], dbt_vars, check=False, project_dir=project_dir)


def published(url: str) -> dict:
    """What a reader sees: the relations of schema warehouse (by OID), the typed relations and InfCands."""
    with psycopg.connect(url) as conn:
        relations = conn.execute(
            "select c.relname, c.oid from pg_class as c join pg_namespace as n on n.oid = c.relnamespace "
            "where n.nspname = 'warehouse' and c.relkind in ('r', 'v') order by 1"
        ).fetchall()
        typed = conn.execute(
            "select typed_rel_id, typed_relation_key from warehouse.typed_relations order by 1"
        ).fetchall()
        candidates = conn.execute(
            "select premise_typed_rel_id, hypothesis_typed_rel_id, alignment "
            "from warehouse.inference_candidates order by 1, 2, 3"
        ).fetchall()
        dangling = conn.execute(
            "select count(*) from warehouse.inference_candidates as c where not exists ("
            "select 1 from warehouse.typed_relations as t where t.typed_rel_id = c.premise_typed_rel_id) "
            "or not exists (select 1 from warehouse.typed_relations as t "
            "where t.typed_rel_id = c.hypothesis_typed_rel_id)"
        ).fetchone()[0]
    return {"relations": relations, "typed": typed, "candidates": candidates, "dangling": dangling}


def staged_relations(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select count(*) from pg_class as c join pg_namespace as n on n.oid = c.relnamespace "
            "where n.nspname = 'warehouse__next'"
        ).fetchone()[0]


@pytest.fixture(scope="module")
def built(make_target, tmp_path_factory) -> tuple[str, dict]:
    """The planted graph built once with the default vars, and what it published."""
    url = make_target().url()
    load_raw_graph(url, planted_graph())
    assert dbt(url, ["run", *TEG], tmp_path_factory.mktemp("dbt")) == 0
    before = published(url)
    assert before["typed"] and before["candidates"] and before["dangling"] == 0
    return url, before


@pytest.mark.parametrize(
    ("bad", "line"),
    [
        ({"top_k_types": 0}, "invalid dbt var top_k_types = 0: must be an integer from 1 to 8"),
        ({"top_k_types": "5"}, 'invalid dbt var top_k_types = "5": must be an integer from 1 to 8'),
        ({"r_min": 0}, "invalid dbt var r_min = 0: must be an integer ≥ 1"),
        ({"min_esr": 1.5}, "invalid dbt var min_esr = 1.5: must be a number from 0 to 1"),
        ({"top_n_premises": True}, "invalid dbt var top_n_premises = true: must be an integer ≥ 1"),
        (
            {"type_sources": []},
            "invalid dbt var type_sources = []: must be null (every source) or a non-empty list",
        ),
        (
            {"type_sources": ["freebase", "nosuchsource"]},
            'invalid dbt var type_sources = ["freebase", "nosuchsource"]: must be type sources of the loaded '
            "batches; not loaded: nosuchsource (loaded: freebase, ner)",
        ),
        ({"map_types": "yes"}, 'invalid dbt var map_types = "yes": must be true or false'),
        (
            {"work_mem": "1GB'; drop table raw.entities; --"},
            'invalid dbt var work_mem = "1GB\'; drop table raw.entities; --": must be a Postgres memory',
        ),
    ],
)
def test_a_bad_var_stops_dbt_before_any_model(built, tmp_path: Path, capfd, bad: dict, line: str) -> None:
    url, before = built
    assert dbt(url, ["run", *TEG], tmp_path, bad) != 0
    output = capfd.readouterr().out
    assert line in output, output[-2000:]
    assert staged_relations(url) == 0  # no model ran
    assert published(url) == before


def test_a_nan_threshold_is_refused(built, tmp_path: Path, capfd) -> None:
    url, before = built
    assert dbt(url, ["run", *TEG, "--vars", "{min_relv: .nan}"], tmp_path) != 0
    assert "invalid dbt var min_relv = NaN: must be a number ≥ 0" in capfd.readouterr().out
    assert published(url) == before


def project_with_file(tmp_path: Path, relative: str, sql: str) -> Path:
    """A copy of the dbt project with one more file (a model or a data test)."""
    copy = tmp_path / "dbt_project"
    shutil.copytree(DBT_PROJECT_DIR, copy, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    (copy / relative).write_text(sql)
    return copy


OTHER_VARS = {"top_k_types": 1, "r_min": 3}  # builds other typed relations and InfCands than the defaults


def test_a_model_failing_half_way_publishes_nothing(built, tmp_path: Path) -> None:
    url, before = built
    project = project_with_file(
        tmp_path,
        "models/marts/teg/zz_fails_after_typed_relations.sql",
        "select 1 / 0 as boom from {{ ref('typed_relations') }}\n",
    )
    code = dbt(url, ["run", *TEG, "zz_fails_after_typed_relations"], tmp_path, OTHER_VARS, project)
    assert code != 0
    assert published(url) == before
    assert staged_relations(url) > 0  # what it built stays staged for `dbt retry`; the next build empties it
    with psycopg.connect(url) as conn:
        last = "select status, error from builds.builds order by build_id desc limit 1"
        status, error = conn.execute(last).fetchone()
    assert status == "failed" and error.startswith("model zz_fails_after_typed_relations: ")
    assert "division by zero" in error


def test_a_data_test_failing_in_build_publishes_nothing(built, tmp_path: Path) -> None:
    url, before = built
    project = project_with_file(
        tmp_path, "tests/assert_fails_on_purpose.sql", "select * from {{ ref('typed_relations') }}\n"
    )
    assert dbt(url, ["build", *TEG], tmp_path, OTHER_VARS, project) != 0
    assert published(url) == before


def test_dbt_test_alone_tests_the_published_marts(built, tmp_path: Path) -> None:
    url, before = built
    assert dbt(url, ["test", *TEG], tmp_path) == 0
    assert published(url) == before


def test_a_successful_build_replaces_every_mart_at_once(built, tmp_path: Path) -> None:
    """The same vars as the failing builds above, without the failure: the marts change (so the
    failures above had something to hide), consistently, and the views still resolve."""
    url, before = built
    assert dbt(url, ["run", *TEG], tmp_path, OTHER_VARS) == 0
    after = published(url)
    assert after["typed"] != before["typed"] and after["candidates"] != before["candidates"]
    assert after["dangling"] == 0
    assert {name for name, _ in after["relations"]} == {name for name, _ in before["relations"]}
    assert staged_relations(url) == 0
    with psycopg.connect(url) as conn:
        # relation_instances is a view over views: moved from warehouse__next, it still resolves
        n_instances = conn.execute("select count(*) from warehouse.relation_instances").fetchone()[0]
        definition = conn.execute("select pg_get_viewdef('warehouse.relation_instances')").fetchone()[0]
    assert n_instances == sum(1 for _ in planted_graph()["instances"])
    assert "warehouse__next" not in definition


def test_autovacuum_waits_until_the_tables_are_published(built, tmp_path: Path) -> None:
    """Autovacuum leaves a build's tables alone while they are staged (publishing, which moves them,
    waited 1 s for every autovacuum it had to cancel) and takes them up again once they are published."""
    url, _ = built
    table_options = (
        "select c.relname::text as table_name, coalesce(array_to_string(c.reloptions, ','), '') as options "
        "from pg_class as c join pg_namespace as n on n.oid = c.relnamespace "
        "where c.relkind = 'r' and n.nspname = "
    )
    project = project_with_file(
        tmp_path,
        "models/marts/teg/zz_staged_table_options.sql",
        "-- depends_on: {{ ref('typed_relations') }}\n"
        + table_options
        + "'{{ this.schema }}' and c.relname <> '{{ this.identifier }}'\n",
    )
    assert dbt(url, ["run", *TEG], tmp_path, None, project) == 0
    with psycopg.connect(url) as conn:
        staged = dict(conn.execute("select * from warehouse.zz_staged_table_options").fetchall())
        live = dict(conn.execute(table_options + "'warehouse'").fetchall())
    # a full build stages int_typed_relations, an incremental one int_typed_relations__delta
    assert "typed_relations" in staged, staged
    assert any(name.startswith("int_typed_relations") for name in staged), staged
    assert {name for name, options in staged.items() if "autovacuum_enabled=false" not in options} == set()
    assert {name: options for name, options in live.items() if "autovacuum_enabled" in options} == {}
