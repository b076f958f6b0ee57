"""Builds you can trust and compare (issue 20), and sherliic-dbt under kills, races and misspelt vars
(issue 21): real dbt, real `sherliic-dbt` processes, real signals, on throwaway databases.

- named builds side by side (one corpus / two corpora), each with a record of its provenance;
  `sherliic-dbt builds` lists them, `--diff` compares, `--drop` removes; exports name their build;
- one build of a schema at a time: the second waits with one line and runs after the first;
- SIGINT / SIGTERM reach dbt, which stops; the build is recorded cancelled, never published, exit
  130 / 143; a SIGKILLed sherliic-dbt takes its dbt with it, and its record is marked failed;
- the publish itself refuses a build whose record is no longer running (whichever comes first);
- unknown vars are refused before dbt starts, with the closest known name.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from psycopg.rows import dict_row
from test_corpora import _add_corpus
from test_dbt_build import ACQUIRE, BUY, load_raw_graph, planted_graph

from builds.runner import dbt_executable
from release.export import export
from warehouse.api import read_mart
from warehouse.settings import DBT_PROJECT_DIR
from warehouse.target import Target

SHERLIIC_DBT = str(Path(sys.executable).parent / "sherliic-dbt")
TEG = ["--select", "tag:teg"]


def sherliic_dbt(target: Target, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [SHERLIIC_DBT, *args], env=target.environment(), capture_output=True, text=True, timeout=900
    )


def start(target: Target, log: Path, *args: str) -> subprocess.Popen:
    """sherliic-dbt in the background, its stdout in log.out and stderr in log.err."""
    out, err = log.with_suffix(".out").open("w"), log.with_suffix(".err").open("w")
    return subprocess.Popen(
        [SHERLIIC_DBT, *args], env=target.environment(), stdout=out, stderr=err, text=True
    )


def wait_for(condition, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def records(target: Target) -> list[dict]:
    with target.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("select * from builds.builds order by build_id").fetchall()


def relations_of(target: Target, schema: str) -> list[str]:
    with target.connect() as conn:
        return [
            row[0]
            for row in conn.execute(
                "select c.relname from pg_class as c join pg_namespace as n on n.oid = c.relnamespace "
                "where n.nspname = %s and c.relkind in ('r', 'v') order by 1",
                (schema,),
            )
        ]


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# -- two builds side by side ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_builds(make_target) -> Target:
    """One database, two corpora (the planted graph `graph`, and `other`), two builds: the default one
    of `graph` alone, the named build `both` of both corpora."""
    target = make_target()
    load_raw_graph(target.url(), planted_graph())
    _add_corpus(target, "other", pairs=200)
    default = sherliic_dbt(target, "run", *TEG, "--vars", "{corpora: [graph]}")
    assert default.returncode == 0, default.stdout[-3000:] + default.stderr
    both = sherliic_dbt(target, "run", "--build", "both", *TEG)  # --build after the dbt command too
    assert both.returncode == 0, both.stdout[-3000:] + both.stderr
    assert "sherliic-dbt: build default #1 (warehouse) succeeded: " in default.stdout
    assert "sherliic-dbt: build both #2 (build_both) succeeded: " in both.stdout
    return target


def test_two_named_builds_of_one_database_coexist(two_builds: Target) -> None:
    target = two_builds
    alone = read_mart("teg_corpora", columns=["corpus_name"], target=target)
    both = read_mart("teg_corpora", columns=["corpus_name"], target=target, build="both")
    assert list(alone.corpus_name) == ["graph"] and sorted(both.corpus_name) == ["graph", "other"]
    where, params = "premise_path = %s and hypothesis_path = %s and alignment = 'straight'", [ACQUIRE, BUY]
    relv = {
        build: read_mart(
            "inference_candidates", where=where, params=params, target=target, build=build
        ).relv.max()
        for build in ("default", "both")
    }
    assert relv["both"] > relv["default"]  # Relv grows with |E|: two graphs, each intact
    assert {"inference_candidates", "rules", "candidate_funnel"} <= set(relations_of(target, "build_both"))
    assert relations_of(target, "build_both__next") == []  # published, staging dropped


def test_recorded_row_counts_are_the_marts_rows(two_builds: Target) -> None:
    # the tables a build creates are counted from dbt's 'SELECT n' when it publishes (no count(*) after
    # the build); views and the rest are counted: either way every mart's count is exact
    default, both = records(two_builds)
    for record in (default, both):
        with two_builds.connect() as conn:
            actual = {
                mart: conn.execute(f'select count(*) from "{record["schema_name"]}"."{mart}"').fetchone()[0]
                for mart in record["row_counts"]
            }
        assert record["row_counts"] == actual
        assert {"teg_edges", "inference_candidates", "candidate_funnel"} <= set(actual)
        assert set(relations_of(two_builds, record["schema_name"])) >= set(actual)


def test_every_build_is_recorded_with_its_provenance(two_builds: Target) -> None:
    default, both = records(two_builds)
    for record in (default, both):
        assert record["status"] == "succeeded" and record["published_at"] is not None
        assert "inference_candidates" in record["published_models"]
        assert record["row_counts"]["inference_candidates"] > 0 and record["exit_code"] == 0
        assert record["runner"] == "sherliic-dbt" and record["dbt_invocation_id"]
        assert record["versions"]["dbt-core"] and record["versions"]["spacy"]
        assert len(record["git_commit"] or "") == 40 and record["git_dirty"] in (True, False)
        assert record["vars"]["r_min"] == 5 and record["vars"]["top_k_types"] == 5  # every var, resolved
        assert [t["checksum"] for t in record["type_tables"]] == ["t1"]  # the planted type table
    assert (default["build_name"], default["schema_name"]) == ("default", "warehouse")
    assert (both["build_name"], both["schema_name"]) == ("both", "build_both")
    assert default["vars"]["corpora"] == ["graph"] and both["vars"]["corpora"] is None
    corpora = {c["corpus"]: [b["checksum"] for b in c["batches"]] for c in both["corpora"]}
    assert corpora == {"graph": ["c1"], "other": ["other"]}
    assert [c["corpus"] for c in default["corpora"]] == ["graph"]


def test_builds_lists_both_with_their_provenance(two_builds: Target) -> None:
    listed = sherliic_dbt(two_builds, "builds")
    assert listed.returncode == 0, listed.stderr
    out = listed.stdout
    assert "#1 default: succeeded (live)" in out and "schema warehouse" in out
    assert "#2 both: succeeded (live)" in out and "schema build_both" in out
    assert "inputs: graph (1 batch); types: types #2" in out
    assert "inputs: graph (1 batch), other (1 batch); types: types #2" in out
    assert 'vars: corpora=["graph"]' in out and "vars: defaults" in out
    as_json = json.loads(sherliic_dbt(two_builds, "builds", "--json").stdout)
    assert [r["build"] for r in as_json] == ["default", "both"]


def test_builds_diff_shows_vars_corpora_and_counts(two_builds: Target) -> None:
    diff = sherliic_dbt(two_builds, "builds", "--diff", "default", "both")
    assert diff.returncode == 0, diff.stderr
    lines = [line.strip() for line in diff.stdout.splitlines()]
    assert lines[0].startswith("default #1 -> both #2: ")
    assert 'var corpora: ["graph"] -> null' in lines
    assert any(line.startswith("corpus other: only in both #2 (#") for line in lines)
    n_graph = len(planted_graph()["instances"])
    assert f"rows of relation_instances: {n_graph:,} -> {n_graph + 200:,}" in lines
    same = sherliic_dbt(two_builds, "builds", "--diff", "#2", "both")
    assert same.stdout.strip() == "both #2 -> both #2: no difference"
    unknown = sherliic_dbt(two_builds, "builds", "--diff", "default", "nosuch")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1
    assert "no build named 'nosuch' (recorded: both, default;" in unknown.stderr


def test_an_export_writes_a_manifest_naming_its_build(two_builds: Target, tmp_path: Path) -> None:
    out = tmp_path / "both"
    export(two_builds.with_build("both"), out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["build"], manifest["build_id"], manifest["schema"]) == ("both", 2, "build_both")
    assert manifest["corpora"] == ["graph", "other"]
    assert [c["corpus"] for c in manifest["record"]["corpora"]] == ["graph", "other"]
    assert manifest["record"]["vars"]["corpora"] is None
    assert set(manifest["files"]) == {
        "teg.tsv", "teg-untyped.tsv", "relation_index.tsv", "entity_index.tsv", "type_index.json",
        "rules.tsv", "relation_rules.tsv", "rules_verifier.tsv",
    }  # fmt: skip
    for name, described in manifest["files"].items():
        data = (out / name).read_bytes()
        assert described["sha256"] == hashlib.sha256(data).hexdigest() and described["bytes"] == len(data)
    rules = (out / "relation_rules.tsv").read_text().splitlines()
    assert rules[0].split("\t")[:3] == ["premise_rel_id", "conclusion_rel_id", "alignment"]
    assert len(rules) - 1 == manifest["files"]["relation_rules.tsv"]["rows"] > 0
    command = [str(Path(sys.executable).parent / "sherliic-export"), "--out", str(tmp_path / "default")]
    done = subprocess.run(command, env=two_builds.environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    default = json.loads((tmp_path / "default" / "manifest.json").read_text())
    assert (default["build"], default["build_id"], default["corpora"]) == ("default", 1, ["graph"])


def test_drop_removes_a_named_build(two_builds: Target) -> None:
    refused = sherliic_dbt(two_builds, "builds", "--drop", "default")
    assert refused.returncode == 2 and "the default build (schema warehouse) is not dropped" in refused.stderr
    dropped = sherliic_dbt(two_builds, "builds", "--drop", "both")
    assert dropped.returncode == 0, dropped.stderr
    assert dropped.stdout.strip() == "dropped build both: schema build_both and 1 record(s)"
    assert relations_of(two_builds, "build_both") == [] and [
        r["build_name"] for r in records(two_builds)
    ] == ["default"]
    assert not (DBT_PROJECT_DIR / "target" / "builds" / "both").exists()
    again = sherliic_dbt(two_builds, "builds", "--drop", "both")
    assert again.returncode == 2 and again.stderr.strip() == (
        "error: no build named 'both' (sherliic-dbt builds lists them)"
    )


# -- kills and races ----------------------------------------------------------------------------------------


def test_a_second_build_waits_and_a_cancelled_build_never_publishes(make_target, tmp_path: Path) -> None:
    target = make_target()
    load_raw_graph(target.url(), planted_graph())
    first = start(target, tmp_path / "first", "run", *TEG)
    wait_for(lambda: [r["status"] for r in records(target)] == ["running"], "the first build's record")
    # a zero-candidate build: it must wait for the first, then say which step removed the candidates
    second = start(target, tmp_path / "second", "run", *TEG, "--vars", "{min_relv: 1000000000000}")
    waiting = "sherliic-dbt: waiting: build #1 of schema warehouse is running (sherliic-dbt since "
    wait_for(lambda: waiting in (tmp_path / "second.err").read_text(), "the second build to wait")
    wait_for(lambda: "START sql" in (tmp_path / "first.out").read_text(), "the first build's models")
    dbt_processes = children_of(first.pid)
    assert dbt_processes, "sherliic-dbt runs dbt as its child"
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=300) == 143
    assert not any(alive(pid) for pid in dbt_processes)  # dbt was waited for
    err = (tmp_path / "first.err").read_text().splitlines()
    assert err == [
        "sherliic-dbt: SIGTERM: stopping dbt",
        "sherliic-dbt: build default #1 cancelled; nothing published, the marts of build default stay "
        "as they were",
    ]
    assert second.wait(timeout=600) == 0, (tmp_path / "second.err").read_text()
    first_record, second_record = records(target)
    assert first_record["status"] == "cancelled" and first_record["published_at"] is None
    assert first_record["published_models"] == [] and first_record["exit_code"] == 143
    assert second_record["status"] == "succeeded" and second_record["row_counts"]["inference_candidates"] == 0
    out = (tmp_path / "second.out").read_text()
    assert (
        "hint: 0 inference candidates: step relv left no pairs with Relv at least min_relv as well (" in out
    )
    assert "dbt var min_relv = 1000000000000: lower min_relv: " in out
    assert " lets some through, e.g. sherliic-dbt run --vars '{min_relv: " in out


@pytest.mark.parametrize(("how", "code", "status"), [("SIGINT", 130, "cancelled"), ("SIGKILL", -9, "failed")])
def test_an_interrupted_build_publishes_nothing_and_leaves_no_dbt(
    make_target, tmp_path: Path, how: str, code: int, status: str
) -> None:
    target = make_target()
    load_raw_graph(target.url(), planted_graph())
    build = start(target, tmp_path / "build", "run", "--build", "trial", *TEG)
    wait_for(lambda: "START sql" in (tmp_path / "build.out").read_text(), "the models")
    dbt_processes = children_of(build.pid)
    build.send_signal(getattr(signal, how))
    assert build.wait(timeout=300) == code
    # SIGKILL: nobody waits for dbt, which dies with its parent (parent-death signal) before it publishes
    wait_for(lambda: not any(alive(pid) for pid in dbt_processes), "dbt to end", timeout=120)
    listed = sherliic_dbt(target, "builds")  # the listing marks a record left running by a killed process
    (record,) = records(target)
    assert (record["status"], record["published_at"]) == (status, None), listed.stdout
    if how == "SIGKILL":
        assert record["error"] == "its dbt process ended before recording an outcome (interrupted or killed)"
    assert "inference_candidates" not in relations_of(target, "build_trial")


def test_the_publish_refuses_a_build_no_longer_running(make_target, tmp_path: Path) -> None:
    """The guard inside the publishing transaction, without timing luck: dbt is held at a model (a lock on
    the raw table its view reads; the record, begun before, reads other tables) while its record is
    marked cancelled, as sherliic-dbt does on a signal; when dbt goes on, its publish refuses, nothing is
    published, and the record stays cancelled."""
    target = make_target()
    load_raw_graph(target.url(), planted_graph())
    command = [
        dbt_executable(), "run", "--select", "+teg_corpora", "stg_extract__sentences",
        "--project-dir", str(DBT_PROJECT_DIR),
        "--profiles-dir", str(DBT_PROJECT_DIR), "--target-path", str(tmp_path / "t"),
    ]  # fmt: skip
    with target.connect() as holder:
        holder.execute("lock table raw.sentences in access exclusive mode")
        dbt = subprocess.Popen(
            command, env=target.dbt_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        wait_for(lambda: [r["status"] for r in records(target)] == ["running"], "the build's record")
        with target.connect() as conn:
            conn.execute("update builds.builds set status = 'cancelled'")
            conn.commit()
        holder.rollback()  # dbt goes on
    out, _ = dbt.communicate(timeout=600)
    assert dbt.returncode != 0, out[-2000:]
    assert "build #1 cancelled" in out and "nothing was published" in out, out[-2000:]
    assert relations_of(target, "warehouse") == []
    (record,) = records(target)
    assert (record["status"], record["published_at"], record["published_models"]) == ("cancelled", None, [])


def test_unknown_vars_are_refused_before_dbt_starts(fresh_target: Target) -> None:
    for given, line in [
        ("{r_mni: 3}", "error: unknown dbt var 'r_mni': did you mean r_min?"),
        ("{corpus: [demo]}", "error: unknown dbt var 'corpus': did you mean corpora?"),
    ]:
        done = sherliic_dbt(fresh_target, "run", "--vars", given)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip() == f"{line} (dbt_project/dbt_project.yml declares every var)"
    assert records(fresh_target) == []  # refused before any build began


def test_a_named_build_on_spark_is_refused_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "SHERLIIC_ENGINE": "spark", "SHERLIIC_SPARK_DIR": str(tmp_path)}
    done = subprocess.run([SHERLIIC_DBT, "--build", "trial", "run"], env=env, capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: named builds (build trial) need the postgres engine")


def test_raw_tables_are_analyzed_once_and_only_when_they_changed(fresh_target: Target) -> None:
    """on-run-start analyzes the raw tables that changed since their last analyze, once per build (two
    models read them first: the second no longer waits for the first's ANALYZE); a build over unchanged
    data analyzes nothing."""
    target = fresh_target
    load_raw_graph(target.url(), planted_graph())

    def statistics() -> dict[str, tuple[int, int, bool]]:
        with target.connect() as conn:
            rows = conn.execute(
                "select relname, analyze_count, n_mod_since_analyze, "
                "coalesce(last_analyze, last_autoanalyze) is not null from pg_stat_user_tables "
                "where relname in ('relation_instances', 'entity_types', 'load_batches') "
                "and schemaname = 'raw'"
            ).fetchall()
        return {name: (analyzed, changed, ever) for name, analyzed, changed, ever in rows}

    first = sherliic_dbt(target, "run", *TEG)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr
    after_first = statistics()
    assert set(after_first) == {"relation_instances", "entity_types", "load_batches"}
    assert all(ever and changed == 0 for _, changed, ever in after_first.values()), after_first
    second = sherliic_dbt(target, "run", *TEG)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr
    assert {name: s[0] for name, s in statistics().items()} == {name: s[0] for name, s in after_first.items()}
