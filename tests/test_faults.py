"""Faults with real signals on real processes (issue 21): `sherliic-extract corpus --processes 2` runs
as a subprocess in a session of its own and is killed or interrupted at a chosen moment (while its
workers parse; while it writes its rows); then the processes, the server's sessions and locks, the raw
tables and a re-run are checked. `remove` cascades through indexed columns only.

The moments are states, not delays: "parsing" = both workers alive and the loader's session open in
its transaction; "writing" = the loader's session waiting for a lock the test holds on raw.entities,
which a load takes only after every document is parsed and its sentences and instances are written.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from demo import generator
from warehouse import server
from warehouse.target import Target

PROJECT = Path(__file__).parent.parent
DOCUMENTS = 1500  # enough for several worker tasks (256 documents each) per worker
WAIT = 120  # seconds for a state to be reached


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """The first DOCUMENTS documents of the demo corpus (fixed seed)."""
    folder = tmp_path_factory.mktemp("faults")
    path, _types, _corpus = generator.write_corpus(folder / "demo", 2500, 1)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)[:DOCUMENTS]
    out = folder / "faults.jsonl"
    out.write_text("".join(lines), encoding="utf-8")
    return out


class Load:
    """`sherliic-extract --quiet corpus --format jsonl --processes 2 FILE` in a new session (its own
    process group, as a terminal's job). sigint: the SIGINT disposition it inherits ("default", or
    "ignored" as in a background job of a script)."""

    def __init__(self, target: Target, path: Path, *, sigint: str = "default"):
        disposition = signal.SIG_IGN if sigint == "ignored" else signal.SIG_DFL
        self.target = target
        self.process = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "sherliic-extract"),
                "--quiet",
                "corpus",
                "--format",
                "jsonl",
                "--processes",
                "2",
                str(path),
            ],
            env={**os.environ, "DATABASE_URL": target.url()},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, disposition),
        )
        self.workers: list[int] = []
        self.stderr = ""

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_parsing(self) -> None:
        """Until both workers are alive and the load's session is open in its transaction."""

        def parsing() -> bool:
            self.workers = [pid for pid in children(self.pid) if alive(pid)]
            return len(self.workers) == 2 and any(
                state == "idle in transaction" for _, state, _ in sessions(self.target)
            )

        until(parsing, "the workers never started parsing", self)

    def wait_blocked_on(self, what: str) -> None:
        """Until the load's session waits for a lock (the one the test holds)."""
        until(
            lambda: any(wait == "Lock" for _, _, wait in sessions(self.target)),
            f"the load never reached {what}",
            self,
        )

    def signal(self, signum: int, *, group: bool) -> None:
        self.workers = self.workers or [pid for pid in children(self.pid) if alive(pid)]
        if group:
            os.killpg(self.pid, signum)
        else:
            os.kill(self.pid, signum)

    def finish(self, timeout: float = WAIT) -> int:
        try:
            _, self.stderr = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill_all()
            pytest.fail("the loader did not end")
        return self.process.returncode

    def kill_all(self) -> None:
        """Test cleanup: the loader and any worker it left (processes this test started)."""
        for pid in [self.pid, *self.workers]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.process.communicate()


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """A running process (a zombie waiting for its reaper is dead)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def sockets(pid: int) -> list[str]:
    folder = Path(f"/proc/{pid}/fd")
    links = []
    for fd in folder.iterdir():
        try:
            links.append(os.readlink(fd))
        except OSError:
            continue
    return [link for link in links if link.startswith("socket:")]


def sessions(target: Target) -> list[tuple[int, str, str | None]]:
    """(backend pid, state, wait event type) of the other sessions on the target's database."""
    with target.connect(autocommit=True) as conn:
        return conn.execute(
            "select pid, state, wait_event_type from pg_stat_activity where datname = current_database() "
            "and pid <> pg_backend_pid() and backend_type = 'client backend'"
        ).fetchall()


def advisory_locks(target: Target) -> int:
    with target.connect(autocommit=True) as conn:
        return conn.execute(
            "select count(*) from pg_locks l join pg_database d on d.oid = l.database "
            "where l.locktype = 'advisory' and d.datname = current_database()"
        ).fetchone()[0]


def raw_counts(target: Target) -> dict[str, int]:
    with target.connect(autocommit=True) as conn:
        return {
            table: conn.execute(f"select count(*) from raw.{table}").fetchone()[0]
            for table in ("sentences", "relation_instances", "entities", "documents")
        } | {
            "loaded": conn.execute(
                "select count(*) from raw.load_batches where status = 'loaded'"
            ).fetchone()[0]
        }


def until(
    condition: Callable[[], bool], message: str, load: Load | None = None, timeout: float = WAIT
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if load is not None and load.process.poll() is not None:
            pytest.fail(
                f"{message}: the loader ended ({load.process.returncode}): {load.process.stderr.read()}"
            )
        time.sleep(0.05)
    if load is not None:
        load.kill_all()
    pytest.fail(message)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def assert_nothing_left(target: Target, load: Load) -> None:
    """No worker running, no session or lock of the load, nothing of it in the raw tables."""
    until(lambda: not any(alive(pid) for pid in load.workers), "workers survived their loader")
    until(lambda: not sessions(target), "the load's session outlived its process", timeout=15)
    assert advisory_locks(target) == 0
    assert raw_counts(target) == {
        "sentences": 0,
        "relation_instances": 0,
        "entities": 0,
        "documents": 0,
        "loaded": 0,
    }


@pytest.fixture()
def load_of(fresh_target, corpus) -> Iterator[Callable[..., Load]]:
    started: list[Load] = []

    def start(**options: str) -> Load:
        started.append(Load(fresh_target, corpus, **options))
        return started[-1]

    yield start
    for load in started:
        load.kill_all()


def test_sigkill_mid_load_leaves_nothing_behind_and_a_rerun_loads_once(fresh_target, corpus, load_of):
    load = load_of()
    load.wait_parsing()
    for worker in load.workers:  # forked after the load's connection: they must not hold its socket
        assert sockets(worker) == [], f"worker {worker} holds the loader's database socket"
    load.signal(signal.SIGKILL, group=False)
    assert load.finish() == -signal.SIGKILL
    assert_nothing_left(fresh_target, load)
    # the re-run neither waits for a lock of the killed load nor loads anything twice
    env = {**os.environ, "DATABASE_URL": fresh_target.url(), "PGOPTIONS": "-c lock_timeout=20s"}
    command = [
        str(Path(sys.executable).parent / "sherliic-extract"),
        "--quiet",
        "corpus",
        "--format",
        "jsonl",
    ]
    rerun = subprocess.run(
        [*command, "--processes", "2", str(corpus)], env=env, capture_output=True, text=True
    )
    assert rerun.returncode == 0, rerun.stderr
    counts = raw_counts(fresh_target)
    assert counts["loaded"] == 1 and counts["documents"] == DOCUMENTS and counts["relation_instances"] > 0
    again = subprocess.run([*command, str(corpus)], env=env, capture_output=True, text=True)
    assert again.returncode == 0 and "already loaded as batch" in again.stderr
    assert raw_counts(fresh_target) == counts


def orphans(moment: str, command: list[str], env: dict[str, str]) -> dict:
    """tests/orphans.py's report on `command` SIGKILLed at `moment`: which descendants outlived it, and
    for how long."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.orphans", moment, *command],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=PROJECT,
    )
    return json.loads(done.stdout)


@pytest.mark.slow
def test_no_process_of_a_sigkilled_loader_outlives_it(fresh_target, corpus):
    """SIGKILL of a `--processes 2` load (with its progress bar, whose thread runs while the pool forks)
    while the pool forks its workers (one forked and the other not yet; both forked, maybe before they
    armed their death signal) and while they parse: every descendant ends within a second. The loader runs
    under tests/orphans.py, a subreaper that inherits each orphan and sees it end."""
    load = [str(Path(sys.executable).parent / "sherliic-extract"), "corpus", "--format", "jsonl"]
    env = {**os.environ, "DATABASE_URL": fresh_target.url()}
    for moment in ("first_child", "two_children", "working"):
        report = orphans(moment, [*load, "--processes", "2", str(corpus)], env)
        assert report["moment"] == moment and len(report["descendants"]) >= 1, report
        assert report["left"] == [] and report["seconds"] < 1.0, report
    assert raw_counts(fresh_target)["loaded"] == 0


@pytest.mark.slow
def test_a_loader_killed_while_it_starts_the_embedded_server(corpus, tmp_path):
    """What a loader starts for the embedded server is not one of its workers: initdb (or pg_ctl) finishes
    the server's start on its own once the loader is gone (a data directory initialised half-way would
    not start again), then ends; the next command finds the server and uses it."""
    pgdata = tmp_path / "pgdata"
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["SHERLIIC_PGDATA"] = str(pgdata)
    load = [str(Path(sys.executable).parent / "sherliic-extract"), "corpus", "--format", "jsonl"]
    report = orphans("child:initdb", [*load, "--processes", "2", str(corpus)], env)
    try:
        assert report["moment"] == "child:initdb" and report["left"] == [], report
        done = subprocess.run(
            [str(Path(sys.executable).parent / "sherliic-extract"), "--quiet", "summary"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
    finally:
        server.stop_embedded_server(pgdata)


@pytest.mark.parametrize("group", [True, False], ids=["process_group", "loader_only"])
def test_sigterm_while_parsing_stops_with_one_line(fresh_target, load_of, group):
    load = load_of()
    load.wait_parsing()
    load.signal(signal.SIGTERM, group=group)
    assert load.finish() == 143, load.stderr
    assert "Traceback" not in load.stderr
    (line,) = error_lines(load.stderr)
    assert line.startswith("error: SIGTERM: stopped loading ") and "nothing of it was kept" in line
    assert_nothing_left(fresh_target, load)


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_sigint_while_writing_rolls_back(fresh_target, load_of, sigint):
    """Ctrl-C (SIGINT to the process group) late in the load, while it writes its rows: the load is
    rolled back, exit 130; also when SIGINT was inherited as ignored (a script's background job, where
    it used to be ignored and the load committed)."""
    with fresh_target.connect() as blocker:
        blocker.execute("lock table raw.entities in share mode")  # held until the block ends
        load = load_of(sigint=sigint)
        load.wait_blocked_on("the writing of its entities")
        load.signal(signal.SIGINT, group=True)
        try:
            load.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass  # ignored: release the lock below and let it finish, to see what it did
        blocker.rollback()
    assert load.finish() == 130, load.stderr
    assert "Traceback" not in load.stderr
    (line,) = error_lines(load.stderr)
    assert (
        line.startswith("error: SIGINT: stopped loading ") and "nothing of it was kept (rolled back)" in line
    )
    assert_nothing_left(fresh_target, load)


def test_sigint_while_parsing_stops_the_workers(fresh_target, load_of):
    load = load_of(sigint="ignored")
    load.wait_parsing()
    load.signal(signal.SIGINT, group=False)  # `kill -INT <loader>`
    assert load.finish() == 130, load.stderr
    (line,) = error_lines(load.stderr)
    assert line.startswith("error: SIGINT: stopped loading ")
    assert_nothing_left(fresh_target, load)


def test_a_worker_killed_fails_the_load_in_one_line(fresh_target, load_of):
    load = load_of()
    load.wait_parsing()
    os.kill(load.workers[0], signal.SIGKILL)
    assert load.finish() == 2, load.stderr
    assert "Traceback" not in load.stderr
    (line,) = error_lines(load.stderr)
    assert "a worker process died while extracting the documents of lines" in line
    assert "nothing of this file was kept" in line
    until(lambda: not any(alive(pid) for pid in load.workers), "workers survived their loader")
    counts = raw_counts(fresh_target)
    assert counts["loaded"] == 0 and counts["sentences"] == 0


def test_every_foreign_key_of_the_raw_schema_is_indexed(db_target):
    """`remove` deletes a batch's rows and the cascades follow the foreign keys: a key column without an
    index makes every deleted row scan the referencing table (a 20k-document batch took 32.8 s to
    remove, then 0.8 s once relation_instances.sentence_id had its index)."""
    with db_target.connect() as conn:
        unindexed = conn.execute(
            """
            select c.conrelid::regclass::text, a.attname
            from pg_constraint c
            join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
            where c.contype = 'f' and c.connamespace = 'raw'::regnamespace
            and not exists (
                select 1 from pg_index i where i.indrelid = c.conrelid and i.indkey[0] = c.conkey[1]
            )
            order by 1, 2
            """
        ).fetchall()
    assert unindexed == []
