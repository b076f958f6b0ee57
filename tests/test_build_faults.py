"""Builds that cannot be lost, and readers that never break a build (docs/design.md §2, "What a build
survives"): schema names that cannot collide, a drop that removes one build, a publish that waits for
readers instead of deadlocking with them, a record finished in the transaction that publishes, signals
around the publish, a crash's empty tables named as such. Real dbt, real signals, throwaway databases.
"""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import pytest
from test_builds import TEG, records, relations_of, sherliic_dbt, start, wait_for
from test_dbt_build import load_raw_graph, planted_graph
from test_plain_dbt import start_plain_dbt

from builds.records import BuildRecord
from builds.runner import ChildOutcome, _report
from extract.cli import main as extract_main
from release.export import export
from warehouse.target import Target

SMALL = ["--select", "+teg_corpora"]
WAITING = "publishing waits for readers of the marts: pid "


@pytest.fixture()
def graph_target(fresh_target: Target) -> Target:
    load_raw_graph(fresh_target.url(), planted_graph())
    return fresh_target


def schemas(target: Target) -> list[str]:
    with target.connect() as conn:
        return [
            row[0]
            for row in conn.execute(
                "select nspname from pg_namespace "
                "where nspname like 'build\\_%' or nspname like 'warehouse%' order by 1"
            )
        ]


# -- names and drops -----------------------------------------------------------------------------------------


def test_no_build_name_can_be_another_builds_staging_schema(graph_target: Target) -> None:
    """`build_<x>__next` is build x's staging schema: a name with `__` is refused, so no build's schema is
    another build's staging schema (before: `run --build col__next` then `run --build col` lost it)."""
    target = graph_target
    refused = sherliic_dbt(target, "run", "--build", "col__next", *SMALL)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    words = "lowercase letters and digits, words joined by single '_'"
    assert f"build name 'col__next': {words}" in refused.stderr
    for name in ("col_next", "col"):
        done = sherliic_dbt(target, "run", "--build", name, *SMALL)
        assert done.returncode == 0, done.stderr
    assert schemas(target) == ["build_col", "build_col_next"]
    assert "teg_corpora" in relations_of(target, "build_col_next")


def test_a_drop_removes_exactly_one_build(graph_target: Target) -> None:
    target = graph_target
    for name in ("col", "col_next", "col_next_2"):
        assert sherliic_dbt(target, "run", "--build", name, *SMALL).returncode == 0
    dropped = sherliic_dbt(target, "builds", "--drop", "col")
    assert dropped.returncode == 0, dropped.stderr
    assert dropped.stdout.strip() == "dropped build col: schema build_col and 1 record(s)"
    assert schemas(target) == ["build_col_next", "build_col_next_2"]
    assert sorted(r["build_name"] for r in records(target)) == ["col_next", "col_next_2"]


def test_a_drop_waits_for_a_reader_and_says_who(graph_target: Target, tmp_path: Path) -> None:
    target = graph_target
    assert sherliic_dbt(target, "run", "--build", "x", *SMALL).returncode == 0
    with target.connect() as reader:
        reader.execute("select count(*) from build_x.teg_corpora").fetchone()  # holds its lock
        drop = start(target, tmp_path / "drop", "builds", "--drop", "x")
        line = "waiting for readers of build x: pid "
        wait_for(lambda: line in (tmp_path / "drop.err").read_text(), "the line")
        assert drop.poll() is None  # still waiting
        reader.rollback()
    assert drop.wait(timeout=120) == 0
    err = (tmp_path / "drop.err").read_text().splitlines()
    assert len(err) == 1 and err[0].startswith("sherliic-dbt builds: waiting for readers of build x: pid ")
    assert err[0].endswith("; the drop follows when they end")
    assert schemas(target) == []


# -- the publish and its readers ----------------------------------------------------------------------


def test_the_publish_waits_for_a_reader_of_several_marts_instead_of_deadlocking(
    graph_target: Target, tmp_path: Path
) -> None:
    """A reader holds one mart in its transaction while a build publishes, then reads a second mart the
    publish replaces (what an export does, file after file). Before, the publish had taken the second and
    waited for the first: a deadlock, and the build was lost. Now the publish holds nothing while it
    waits: the reader reads both marts of the old build, and then the build is published."""
    target = graph_target
    assert sherliic_dbt(target, "run", *SMALL).returncode == 0
    with target.connect() as conn:
        conn.execute("update raw.load_batches set source_file = 'renamed.jsonl' where kind = 'corpus'")
        conn.commit()
    with target.connect() as reader:
        first = reader.execute("select count(*) from warehouse.teg_corpora").fetchone()[0]
        build = start(target, tmp_path / "build", "run", *SMALL)
        wait_for(lambda: WAITING in (tmp_path / "build.out").read_text(), "the publish to wait")
        files = reader.execute("select source_file from warehouse.int_build_batches order by 1").fetchall()
        reader.rollback()
    assert first == 1 and files == [("graph.jsonl",), ("types.tsv",)]  # the old build, whole
    assert build.wait(timeout=300) == 0, (tmp_path / "build.err").read_text()
    assert [r["status"] for r in records(target)] == ["succeeded", "succeeded"]
    with target.connect() as conn:
        published = conn.execute("select source_file from warehouse.int_build_batches order by 1").fetchall()
    assert published == [("renamed.jsonl",), ("types.tsv",)]


def test_an_export_beside_builds_names_the_build_of_its_files(graph_target: Target, tmp_path: Path) -> None:
    """Exports in a loop while builds of the same name publish: every build succeeds, and every manifest
    names a finished, published record whose counts are complete and match the files."""
    target = graph_target
    assert sherliic_dbt(target, "run", *TEG).returncode == 0
    stop = threading.Event()
    manifests: list[dict] = []
    errors: list[BaseException] = []

    def export_loop() -> None:
        try:
            while not stop.is_set():
                out = tmp_path / f"export-{len(manifests)}"
                export(target, out)
                manifests.append(json.loads((out / "manifest.json").read_text()))
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    thread = threading.Thread(target=export_loop)
    thread.start()
    try:
        for _ in range(3):
            done = sherliic_dbt(target, "run", *TEG, "--full-refresh")
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    finally:
        stop.set()
        thread.join(timeout=300)
    assert not errors, errors
    assert [r["status"] for r in records(target)] == ["succeeded"] * 4
    assert manifests
    for manifest in manifests:
        record = manifest["record"]
        assert record["status"] == "succeeded" and record["finished_at"] and record["published_at"]
        assert {"teg_edges", "entities", "untyped_edges", "inference_candidates"} <= set(record["row_counts"])
        assert manifest["files"]["teg.tsv"]["rows"] == record["row_counts"]["teg_edges"]


# -- signals around the publish -----------------------------------------------------------------------


def test_sigkill_during_the_publish_leaves_record_and_marts_in_step(
    graph_target: Target, tmp_path: Path
) -> None:
    """sherliic-dbt killed while its publish waits (a reader holds a mart): nothing of the build is
    published, and the record says why (before: the marts were published, the record said failed)."""
    target = graph_target
    assert sherliic_dbt(target, "run", *SMALL).returncode == 0
    with target.connect() as reader:
        reader.execute("select count(*) from warehouse.teg_corpora").fetchone()
        build = start(target, tmp_path / "build", "run", *SMALL)
        wait_for(lambda: WAITING in (tmp_path / "build.out").read_text(), "the publish to wait")
        build.send_signal(signal.SIGKILL)
        assert build.wait(timeout=60) == -9
        reader.rollback()
    wait_for(lambda: records(target)[-1]["status"] != "running", "dbt to record the outcome", timeout=120)
    first, second = records(target)
    assert first["published_at"] is not None
    assert (second["status"], second["published_at"]) == ("failed", None)
    assert second["error"] == (
        f"publish: the sherliic-dbt that started build #{second['build_id']} has ended: nothing is published"
    )
    with target.connect() as conn:
        live = conn.execute(
            "select build_id from builds.builds where published_models ? 'teg_corpora' "
            "and published_at is not null order by build_id desc limit 1"
        ).fetchone()[0]
    assert live == first["build_id"]


def test_a_stop_after_the_publish_reports_what_the_record_says() -> None:
    """SIGINT arriving just after the publish committed: the record says succeeded, so sherliic-dbt says
    succeeded and exits 0 (before: it printed succeeded and exited 130)."""
    record = BuildRecord(
        build_id=7, build_name="default", schema_name="warehouse", engine="postgres", command="run",
        status="succeeded", started_at=None, finished_at=None, published_at=None,
        published_models=["inference_candidates"], vars={}, corpora=[], type_tables=[], git_commit=None,
        git_dirty=None, versions={}, row_counts={"inference_candidates": 3}, exit_code=0, error=None,
        incremental=None, build_plan=None, runner="sherliic-dbt", retry_of=None, staged_models=None,
        hint=None,
    )  # fmt: skip
    outcome = ChildOutcome(exit_code=130, output=[], interrupted=True)
    assert _report(Target.postgres("postgresql://u@h/db"), "warehouse", record, outcome) == 0


def test_a_cancel_that_comes_while_the_publish_waits_publishes_nothing(
    graph_target: Target, tmp_path: Path
) -> None:
    """SIGINT to sherliic-dbt while its publish waits for a reader: the record is marked cancelled first,
    the publish (inside its transaction) refuses it, exit 130, the old marts stay."""
    target = graph_target
    assert sherliic_dbt(target, "run", *SMALL).returncode == 0
    with target.connect() as reader:
        reader.execute("select count(*) from warehouse.teg_corpora").fetchone()
        build = start(target, tmp_path / "build", "run", *SMALL)
        wait_for(lambda: WAITING in (tmp_path / "build.out").read_text(), "the publish to wait")
        build.send_signal(signal.SIGINT)
        assert build.wait(timeout=120) == 130
        reader.rollback()
    first, second = records(target)
    assert (second["status"], second["published_at"], second["exit_code"]) == ("cancelled", None, 130)
    err = (tmp_path / "build.err").read_text()
    assert f"sherliic-dbt: build default #{second['build_id']} cancelled" in err


# -- what the marts say after a fault -----------------------------------------------------------------


def test_an_empty_plan_after_a_crash_is_named_as_such(graph_target: Target, tmp_path: Path, capfd) -> None:
    """A crash empties the unlogged intermediate tables (Postgres resets them at recovery); the next build
    is full and says why (before: "the last build was partial")."""
    target = graph_target
    assert sherliic_dbt(target, "run", *TEG).returncode == 0
    with target.connect() as conn:
        conn.execute("truncate warehouse.int_build_plan")  # what crash recovery does to an unlogged table
        conn.commit()
    done = sherliic_dbt(target, "run", *TEG)
    assert done.returncode == 0, done.stderr
    assert "full build: the previous build's plan is empty: the server restarted after a crash" in done.stdout
    assert records(target)[-1]["build_plan"].startswith("full build: the previous build's plan is empty")


def test_removing_a_batch_says_what_the_marts_show(graph_target: Target, capfd) -> None:
    """The marts keep the removed batch's graph until the next build, except the view relation_instances,
    which reads the loaded sentences; the removal says so, and the marts show it."""
    target = graph_target
    assert sherliic_dbt(target, "run", *TEG).returncode == 0
    with target.connect() as conn:
        edges = conn.execute("select sum(n_instances) from warehouse.untyped_edges").fetchone()[0]
        batch = conn.execute("select batch_id from raw.load_batches where kind = 'corpus'").fetchone()[0]
    code = extract_main(["--database-url", target.url(), "remove", str(batch)])
    assert code == 0
    line = capfd.readouterr().err
    assert "the marts keep the old graph until the next build (make dbt-run), except the view" in line
    with target.connect() as conn:
        assert conn.execute("select sum(n_instances) from warehouse.untyped_edges").fetchone()[0] == edges
        assert conn.execute("select count(*) from warehouse.relation_instances").fetchone()[0] == 0


def test_a_sherliic_dbt_build_beside_a_plain_one_is_refused_and_says_why(
    graph_target: Target, tmp_path: Path
) -> None:
    """sherliic-dbt waits for its own builds of a schema (its lock); a build started by hand holds no lock,
    so a sherliic-dbt build beside it is refused when it begins, and says that it did not start, and why."""
    target = graph_target
    with target.connect() as holder:
        holder.execute("lock table raw.sentences in access exclusive mode")
        first = start_plain_dbt(target, tmp_path, "first", "run", *SMALL, "stg_extract__sentences")
        wait_for(lambda: [r["status"] for r in records(target)] == ["running"], "the first build's record")
        second = sherliic_dbt(target, "run", *SMALL)
        holder.rollback()
    out, _ = first.communicate(timeout=600)
    assert first.returncode == 0, out[-3000:]
    assert second.returncode != 0
    assert "sherliic-dbt: build default did not start: " in second.stderr
    assert "build #1 of schema warehouse is running (dbt since " in second.stderr
