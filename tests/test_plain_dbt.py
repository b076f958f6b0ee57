"""Plain dbt is the way in (docs/design.md §2, "Builds"): `dbt` run by hand in dbt_project/ finds the
server, builds named builds through the dbt var `build`, records every build itself like sherliic-dbt,
refuses a second build of a running schema, resumes a failed build with `dbt retry`, and gives a hint
with a number when a build yields no candidate. Real dbt processes on throwaway databases.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict
from test_builds import TEG, records, relations_of, sherliic_dbt, wait_for
from test_dbt_build import load_raw_graph, planted_graph

from builds.runner import dbt_executable
from warehouse import server
from warehouse.settings import DBT_PROJECT_DIR
from warehouse.target import Target

SMALL = ["--select", "+teg_corpora"]  # a build of three models: enough for records and publishing


def plain_env(database_url: str | None, **extra: str) -> dict[str, str]:
    """The environment of a user's shell: no SHERLIIC_* variable, DATABASE_URL only when given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHERLIIC_") and k != "DATABASE_URL"}
    env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "False"
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    return {**env, **extra}


def plain_dbt(target: Target | None, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """`dbt ARGS` typed in dbt_project/ (the profile found there), on `target`'s database through
    DATABASE_URL, or with no database setting at all (None: the embedded server's default database); the
    test's own target folder (dbt's manifest) where the command has one."""
    folder = [] if args[0] == "debug" else ["--target-path", str(tmp_path / "dbt-target")]
    command = [dbt_executable(), *args, *folder]
    url = None if target is None else target.url()
    return subprocess.run(
        command, cwd=DBT_PROJECT_DIR, env=plain_env(url), capture_output=True, text=True, timeout=900
    )


def start_plain_dbt(target: Target, tmp_path: Path, name: str, *args: str) -> subprocess.Popen:
    command = [dbt_executable(), *args, "--target-path", str(tmp_path / f"dbt-target-{name}")]
    return subprocess.Popen(
        command,
        cwd=DBT_PROJECT_DIR,
        env=plain_env(target.url()),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture()
def graph_target(fresh_target: Target) -> Target:
    load_raw_graph(fresh_target.url(), planted_graph())
    return fresh_target


# -- the connection --------------------------------------------------------------------------------------


def rendered_profile(database_url: str | None) -> tuple:
    """(host, port, user, password, dbname) of dbt_project/profiles.yml's default target, rendered by dbt
    itself for `database_url` (None: unset)."""
    script = """
import os
from argparse import Namespace
from dbt.config.profile import Profile, read_profile
from dbt.config.renderer import ProfileRenderer
from dbt.flags import set_from_args
from dbt_common.context import set_invocation_context
import dbt.adapters.postgres  # noqa: F401
set_from_args(Namespace(PROFILES_DIR=os.getcwd()), None)
set_invocation_context(os.environ)
profile = Profile.from_raw_profiles(read_profile(os.getcwd()), "sherliic", ProfileRenderer({}), "default")
c = profile.credentials
print(repr((c.host, str(c.port), c.user, c.password, c.database)))
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=DBT_PROJECT_DIR,
        env=plain_env(database_url),
        capture_output=True,
        text=True,
        check=True,
    )
    return eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 - our own repr of a tuple of str


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://alice:p%40ss%25w0rd%2541@db.example.org:6543/my%20db?sslmode=require",
        "postgres://u@[::1]/d",
        "postgresql:///x?user=bob&password=s%26cret&host=%2Ftmp%2Fsock&port=5433",
        "postgresql://postgres:@/sherliic_test?host=/work/x/.pgdata",
        "postgresql://localhost",
    ],
)
def test_the_profile_reads_database_url_as_libpq_does(url: str) -> None:
    libpq = conninfo_to_dict(url)  # libpq's own reading of the URL
    expected = (
        libpq.get("host", "localhost"),
        libpq.get("port", "5432"),
        libpq.get("user", "postgres"),
        libpq.get("password", ""),
        libpq.get("dbname", "sherliic"),
    )
    assert rendered_profile(url) == expected


def test_without_database_url_the_profile_finds_the_embedded_server() -> None:
    host, port, user, password, dbname = rendered_profile(None)
    assert Path(host).resolve() == (DBT_PROJECT_DIR.parent / ".pgdata").resolve()
    assert (port, user, password, dbname) == ("5432", "postgres", "", "sherliic")


def test_plain_dbt_works_with_no_setting_at_all(tmp_path: Path) -> None:
    """`dbt debug` and `dbt ls` typed in dbt_project/ with nothing in the environment: the embedded
    server of the checkout (started by the test session) and its default database."""
    environment = Target.from_environment()
    if environment.database_url is not None or environment.pgdata != DBT_PROJECT_DIR.parent / ".pgdata":
        pytest.skip("the suite runs on another server (DATABASE_URL / SHERLIIC_PGDATA): not the default one")
    server.embedded_database_url(environment.pgdata)  # `make demo` / `sherliic-db start` create it
    debug = plain_dbt(None, tmp_path, "debug")
    assert debug.returncode == 0, debug.stdout[-3000:]
    assert "All checks passed!" in debug.stdout
    models = ["--resource-type", "model", "--output", "name"]
    listed = plain_dbt(None, tmp_path, "ls", "--select", "inference_candidates", *models)
    assert listed.returncode == 0, listed.stdout[-3000:]
    assert listed.stdout.strip().splitlines()[-1] == "inference_candidates"


def test_dbt_files_are_git_ignored() -> None:
    ignored = subprocess.run(
        ["git", "check-ignore", "dbt_project/.user.yml", "dbt_project/target/x", "dbt_project/logs/dbt.log"],
        cwd=DBT_PROJECT_DIR.parent,
        capture_output=True,
        text=True,
    )
    assert ignored.stdout.split() == [
        "dbt_project/.user.yml", "dbt_project/target/x", "dbt_project/logs/dbt.log",
    ]  # fmt: skip


# -- builds recorded by dbt itself -------------------------------------------------------------------------


def test_a_plain_named_build_is_recorded_like_a_sherliic_dbt_one(
    graph_target: Target, tmp_path: Path
) -> None:
    target = graph_target
    done = plain_dbt(target, tmp_path, "run", *TEG, "--vars", "{build: x, r_min: 3}")
    assert done.returncode == 0, done.stdout[-3000:]
    (record,) = records(target)
    assert (record["build_name"], record["schema_name"], record["status"]) == ("x", "build_x", "succeeded")
    assert record["runner"] == "dbt" and record["command"].startswith("run --select tag:teg --vars ")
    assert record["vars"]["r_min"] == 3 and record["vars"]["build"] == "x"
    assert record["vars"]["min_esr"] == 0.6  # every var, resolved
    assert [c["corpus"] for c in record["corpora"]] == ["graph"]
    assert [t["checksum"] for t in record["type_tables"]] == ["t1"]
    assert record["versions"]["dbt-core"] and record["versions"]["postgres"]
    assert record["git_commit"] is None  # plain dbt cannot run git
    assert record["row_counts"]["inference_candidates"] > 0 and record["exit_code"] == 0
    assert "inference_candidates" in relations_of(target, "build_x")
    assert relations_of(target, "warehouse") == []  # the default build is untouched
    listed = sherliic_dbt(target, "builds")
    assert "#1 x: succeeded (live), " in listed.stdout
    assert "schema build_x, dbt run --select tag:teg" in listed.stdout
    assert "vars: r_min=3" in listed.stdout
    assert "code: commit not recorded (plain dbt cannot run git; sherliic-dbt records it)" in listed.stdout


def test_builds_diff_shows_the_vars_that_differ(graph_target: Target, tmp_path: Path) -> None:
    target = graph_target
    assert sherliic_dbt(target, "run", *TEG).returncode == 0
    assert plain_dbt(target, tmp_path, "run", *TEG, "--vars", "{build: lo, r_min: 3}").returncode == 0
    diff = sherliic_dbt(target, "builds", "--diff", "default", "lo")
    lines = [line.strip() for line in diff.stdout.splitlines()]
    assert "var r_min: 5 -> 3" in lines
    assert not any(line.startswith("var build:") for line in lines)  # a build's own name is no difference


def test_a_bad_build_name_or_a_misspelt_var_stops_plain_dbt(graph_target: Target, tmp_path: Path) -> None:
    target = graph_target
    for given, line in [
        ("{build: col__next}", "a build name is lowercase letters and digits, words joined by single '_'"),
        ("{r_mni: 3}", "unknown dbt var 'r_mni': the vars: "),
    ]:
        done = plain_dbt(target, tmp_path, "run", *SMALL, "--vars", given)
        assert done.returncode != 0 and line in done.stdout, done.stdout[-2000:]
    assert records(target) == []


def test_two_builds_named_at_once_are_refused(graph_target: Target) -> None:
    done = sherliic_dbt(graph_target, "--build", "aa", "run", *SMALL, "--vars", "{build: bb}")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == (
        "error: two builds named: --build aa (or SHERLIIC_BUILD) and the dbt var build: bb; name one"
    )
    same = sherliic_dbt(graph_target, "--build", "aa", "run", *SMALL, "--vars", "{build: aa}")
    assert same.returncode == 0, same.stderr
    assert [(r["build_name"], r["status"]) for r in records(graph_target)] == [("aa", "succeeded")]


def test_a_second_plain_build_of_a_running_schema_is_refused(graph_target: Target, tmp_path: Path) -> None:
    """The first build is held at a model (a lock on the raw table its view reads); a second plain dbt
    build of the same schema stops at start with one line naming it, builds nothing, and the first one
    publishes."""
    target = graph_target
    with target.connect() as holder:
        holder.execute("lock table raw.sentences in access exclusive mode")
        first = start_plain_dbt(target, tmp_path, "first", "run", *SMALL, "stg_extract__sentences")
        wait_for(lambda: [r["status"] for r in records(target)] == ["running"], "the first build's record")
        second = plain_dbt(target, tmp_path, "run", *SMALL)
        holder.rollback()
    out, _ = first.communicate(timeout=600)
    assert first.returncode == 0, out[-3000:]
    assert second.returncode != 0
    assert "build #1 of schema warehouse is running (dbt since " in second.stdout, second.stdout[-3000:]
    assert [r["status"] for r in records(target)] == ["succeeded"]  # the second left no record
    assert "teg_corpora" in relations_of(target, "warehouse")


def test_a_record_left_running_by_a_dead_process_is_settled(graph_target: Target, tmp_path: Path) -> None:
    target = graph_target
    with target.connect() as conn:
        conn.execute(
            "insert into builds.builds (build_name, schema_name, command, status, runner) "
            "values ('default', 'warehouse', 'run', 'running', 'dbt')"
        )
        conn.commit()
    done = plain_dbt(target, tmp_path, "run", *SMALL)
    assert done.returncode == 0, done.stdout[-3000:]
    stale, new = records(target)
    assert (stale["status"], stale["error"]) == (
        "failed",
        "its dbt process ended before recording an outcome (interrupted or killed)",
    )
    assert new["status"] == "succeeded"


# -- what a failed build leaves, and dbt retry -------------------------------------------------------------


def test_dbt_retry_resumes_a_failed_build(graph_target: Target, tmp_path: Path) -> None:
    """A build whose model fails (its raw table is missing) publishes nothing, records the cause, and keeps
    what it built for `dbt retry`, which builds the rest and publishes the whole build."""
    target = graph_target
    with target.connect() as conn:
        conn.execute("alter table raw.sentences rename to sentences_away")
        conn.commit()
    failed = plain_dbt(target, tmp_path, "run", *SMALL, "stg_extract__sentences", "--vars", "{build: r}")
    assert failed.returncode != 0
    (record,) = records(target)
    assert record["status"] == "failed"
    assert record["error"].startswith("model stg_extract__sentences: ")
    assert 'relation "raw.sentences" does not exist' in record["error"]  # the cause, not only its title
    assert sorted(record["staged_models"]) == [
        "model.sherliic.int_build_batches",
        "model.sherliic.stg_extract__load_batches",
        "model.sherliic.teg_corpora",
    ]
    assert relations_of(target, "build_r") == []
    with target.connect() as conn:
        conn.execute("alter table raw.sentences_away rename to sentences")
        conn.commit()
    retried = plain_dbt(target, tmp_path, "retry")
    assert retried.returncode == 0, retried.stdout[-3000:]
    assert "1 of 1 OK created sql view model build_r__next.stg_extract__sentences" in retried.stdout
    failed_record, retry = records(target)
    assert (retry["status"], retry["build_name"]) == ("succeeded", "r")
    assert retry["retry_of"] == failed_record["build_id"]
    assert sorted(retry["published_models"]) == [
        "int_build_batches", "stg_extract__load_batches", "stg_extract__sentences", "teg_corpora",
    ]  # fmt: skip
    assert failed_record["staged_models"] is None  # handed over to the retry
    assert relations_of(target, "build_r") == [
        "int_build_batches", "stg_extract__load_batches", "stg_extract__sentences", "teg_corpora",
    ]  # fmt: skip
    assert relations_of(target, "build_r__next") == []


def test_a_retry_after_another_build_is_refused(graph_target: Target, tmp_path: Path) -> None:
    target = graph_target
    with target.connect() as conn:
        conn.execute("alter table raw.sentences rename to sentences_away")
        conn.commit()
    assert plain_dbt(target, tmp_path, "run", *SMALL, "stg_extract__sentences").returncode != 0
    with target.connect() as conn:
        conn.execute("alter table raw.sentences_away rename to sentences")
        conn.commit()
    assert sherliic_dbt(target, "run", *SMALL).returncode == 0  # empties the staging schema
    retried = plain_dbt(target, tmp_path, "retry")
    assert retried.returncode != 0
    assert "no failed build of schema warehouse kept its models for a retry" in retried.stdout


# -- a build without candidates -------------------------------------------------------------------------


def test_a_zero_candidate_build_hints_a_value_and_keeps_its_vars(
    graph_target: Target, tmp_path: Path
) -> None:
    target = graph_target
    given = "{build: acq, corpora: [graph], min_relv: 1000000000000}"
    done = plain_dbt(target, tmp_path, "run", *TEG, "--vars", given)
    assert done.returncode == 0, done.stdout[-3000:]
    (record,) = records(target)
    hint = record["hint"]
    assert hint.startswith(
        "0 inference candidates: step relv left no pairs with Relv at least min_relv as well ("
    ), hint
    with target.connect() as conn:
        largest = conn.execute(
            "select max(relv) from build_acq.int_candidate_scores where passes_overlap "
            "and passes_projections and passes_types and premise_rel_id <> hypothesis_rel_id"
        ).fetchone()[0]
    value = int(largest * 100) / 100
    assert f"dbt var min_relv = 1000000000000: lower min_relv: {value} lets some through, e.g. " in hint
    command = f"""dbt run --vars '{{build: acq, corpora: ["graph"], min_relv: {value}}}'"""
    assert command in hint
    assert f"hint: {hint}" in done.stdout  # plain dbt prints it; sherliic-dbt prints it from the record
    dbt_command, *options = shlex.split(command)[1:]
    again = plain_dbt(target, tmp_path, dbt_command, *TEG, *options)
    assert again.returncode == 0, again.stdout[-3000:]
    assert records(target)[-1]["row_counts"]["inference_candidates"] > 0  # the value lets candidates through
    assert [c["corpus"] for c in records(target)[-1]["corpora"]] == ["graph"]
