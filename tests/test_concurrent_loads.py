"""No command waits behind a running load (issue #12, item 7), with real loads into the real Postgres.

A load holds its transaction open while it parses and COPYs (minutes on a real corpus). Loads of other
files and read-only commands must not queue behind it: the schema check at their start is one read of
raw.schema_version (warehouse.server.ensure_schema), and the loads share no lock."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from extract.batches.store import BatchSummary
from extract.loading import load_corpus
from extract.summary import database_summary
from warehouse.target import Target

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
WAIT = 120  # seconds before a step counts as blocked


class HeldLoad:
    """load_corpus of `path` in a thread, stopped inside its transaction (after its first document is
    written) until release()."""

    def __init__(self, path: Path, target: Target):
        self.inside, self.released = threading.Event(), threading.Event()
        self.result: list[BatchSummary] = []
        self.thread = threading.Thread(
            target=lambda: self.result.append(load_corpus(target, path, "conllu", progress=self._hold))
        )

    def _hold(self, _documents: int) -> None:
        self.inside.set()
        self.released.wait(WAIT)

    def __enter__(self) -> HeldLoad:
        self.thread.start()
        assert self.inside.wait(WAIT), "the held load never started writing"
        return self

    def __exit__(self, *exc) -> None:
        self.released.set()
        self.thread.join(WAIT)


def finishes(step: Callable[[], object]) -> object:
    """Run `step` in a thread; its result, or a failure if it is still blocked after WAIT seconds."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(step()), daemon=True)
    thread.start()
    thread.join(WAIT)
    assert not thread.is_alive(), "blocked behind the open load"
    assert result, "the step failed (see the thread's traceback above)"
    return result[0]


def other_file(tmp_path: Path) -> Path:
    """sample.conllu with other sentence ids: another file (other checksum) of the same corpus."""
    path = tmp_path / "other.conllu"
    path.write_text((FIXTURES / "sample.conllu").read_text().replace("sent_id = s", "sent_id = other-s"))
    return path


def batch_statuses(target: Target) -> list[tuple[str, str]]:
    with target.connect() as conn:
        rows = conn.execute("select source_file, status from raw.load_batches order by batch_id").fetchall()
    return [(Path(source).name, status) for source, status in rows]


def test_two_loads_of_different_files_overlap(fresh_target: Target, tmp_path: Path) -> None:
    with HeldLoad(FIXTURES / "sample.conllu", fresh_target) as held:
        second = finishes(lambda: load_corpus(fresh_target, other_file(tmp_path), "conllu"))
        # the second load committed while the first one's transaction was still open
        assert held.thread.is_alive() and not held.result
        assert second.counts["instances"] == 3
        assert batch_statuses(fresh_target) == [("other.conllu", "loaded")]  # the first is not visible yet
    assert held.result and held.result[0].counts["instances"] == 3
    assert sorted(batch_statuses(fresh_target)) == [("other.conllu", "loaded"), ("sample.conllu", "loaded")]


def test_summary_runs_while_a_load_is_open(fresh_target: Target) -> None:
    with HeldLoad(FIXTURES / "sample.conllu", fresh_target) as held:
        summary = finishes(lambda: database_summary(fresh_target))
        assert summary["batches"] == {} and summary["tables"]["relation_instances"] == 0
        cli = finishes(
            lambda: subprocess.run(
                [str(Path(sys.executable).parent / "sherliic-extract"), "summary"],
                env={**os.environ, "DATABASE_URL": fresh_target.url()},
                capture_output=True,
                text=True,
                timeout=WAIT,
            )
        )
        assert cli.returncode == 0, cli.stderr
        assert held.thread.is_alive()
    assert database_summary(fresh_target)["tables"]["relation_instances"] == 3
