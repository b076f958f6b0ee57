"""Distributed extraction on Spark (extract.spark_load through `sherliic-extract` with SHERLIIC_ENGINE=spark):
the same rows as the Postgres loader, and the same batch bookkeeping (checksum, skip, --replace,
--skip-bad, `file:line: problem`, no partial batch). The CLI runs in a child process that keeps its Spark
session between commands (a JVM start costs ~15 s a command here); a second child takes over half-way, to
show that a new process reads what the first one left. The tables are read back from their Parquet files
(the local catalog's Derby metastore admits one process at a time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from extract.loading import load_corpus
from tests.test_load import BAD_CASES, GOOD
from tests.test_spark_engine import needs_spark
from warehouse.target import Target

# the child: runs `sherliic-extract ARGV` for each JSON argv read from stdin, in this one process, and
# answers each with one JSON line on the stdout it started with (anything else printed goes to stderr)
CLI_CHILD = """
import contextlib, io, json, os, sys
from extract.cli import main
replies = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
for line in sys.stdin:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(json.loads(line))
    replies.write(json.dumps([code, out.getvalue(), err.getvalue()]) + "\\n")
    replies.flush()
"""


class SparkCLI:
    """`sherliic-extract` on Spark local[2] with the catalog `catalog`, in one child process."""

    def __init__(self, catalog: Path):
        self.summary = catalog.parent / "summary.json"
        env = {**os.environ, "SHERLIIC_ENGINE": "spark", "SHERLIIC_SPARK_DIR": str(catalog)}
        self.child = subprocess.Popen(
            [sys.executable, "-c", CLI_CHILD],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, *args: str) -> tuple[int, str, str]:
        """Exit code, stdout and stderr of `sherliic-extract --quiet ARGS`."""
        assert self.child.stdin is not None and self.child.stdout is not None
        self.child.stdin.write(json.dumps(["--quiet", *args]) + "\n")
        self.child.stdin.flush()
        reply = self.child.stdout.readline()
        assert reply, f"the CLI child ended with exit code {self.child.wait()}"
        code, out, err = json.loads(reply)
        return code, out, err

    def extract(self, *args: str) -> tuple[int, list[dict], str]:
        """Exit code, batch summaries and stderr of a load."""
        self.summary.unlink(missing_ok=True)
        code, _, err = self.run("--summary-json", str(self.summary), *args)
        return code, json.loads(self.summary.read_text()) if self.summary.exists() else [], err

    def __enter__(self) -> SparkCLI:
        return self

    def __exit__(self, failed, *_) -> None:
        """End the child (its Spark session with it): the catalog is free for another process."""
        assert self.child.stdin is not None
        self.child.stdin.close()
        if failed:
            self.child.kill()
        assert self.child.wait(timeout=120) == 0 or failed


def table(catalog: Path, name: str) -> list[dict]:
    path = catalog / "spark-warehouse" / "raw.db" / name
    return ds.dataset(path, format="parquet", partitioning="hive").to_table().to_pylist()


COLUMNS = {
    "sentences": ("document_id", "line_number", "sentence_index", "text"),
    "entities": ("entity_id", "entity_name"),
    "entity_types": ("entity_id", "type_name", "type_source"),
    "path_rejections": ("rule", "n_paths"),
}
INSTANCE_COLUMNS = ("path", "arg1_entity_id", "arg2_entity_id", "subject_side")


def spark_rows(catalog: Path, batch_id: int) -> dict[str, Counter]:
    """A batch's rows per raw table, without ids (instances with their sentence's text), as multisets."""
    rows = {name: [r for r in table(catalog, name) if r["batch_id"] == batch_id] for name in COLUMNS}
    counts = {name: Counter(tuple(r[c] for c in COLUMNS[name]) for r in rows[name]) for name in COLUMNS}
    text = {s["sentence_id"]: s["text"] for s in rows["sentences"]}
    instances = [i for i in table(catalog, "relation_instances") if i["batch_id"] == batch_id]
    counts["instances"] = Counter(
        (text[i["sentence_id"]], *(i[c] for c in INSTANCE_COLUMNS)) for i in instances
    )
    return counts


def postgres_rows(target: Target, batch_id: int) -> dict[str, Counter]:
    queries = {
        name: f"select {', '.join(columns)} from raw.{name} where batch_id = %s"
        for name, columns in COLUMNS.items()
    }
    queries["instances"] = (
        "select s.text, i.path, i.arg1_entity_id, i.arg2_entity_id, i.subject_side "
        "from raw.relation_instances i join raw.sentences s using (sentence_id) where i.batch_id = %s"
    )
    with target.connect() as conn:
        return {name: Counter(conn.execute(sql, (batch_id,)).fetchall()) for name, sql in queries.items()}


@needs_spark
@pytest.mark.slow
def test_spark_loader_rows_and_batch_bookkeeping(fresh_target, tmp_path):
    catalog = tmp_path / "spark"
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(GOOD.read_bytes())  # same content under another name
    bad = tmp_path / "bad.jsonl"
    lines = GOOD.read_text().splitlines()
    bad.write_text("\n".join([lines[0], BAD_CASES["misaligned"][0], lines[3], "{broken"]) + "\n")

    # the same rows as the Postgres loader; the same content again is skipped
    with SparkCLI(catalog) as cli:
        code, summaries, stderr = cli.extract("corpus", "--format", "jsonl", str(GOOD), str(copy))
        assert code == 0, stderr
        first, again = summaries
        assert not first["skipped"] and again["skipped"] and again["batch_id"] == first["batch_id"]
        assert "already loaded as batch" in again["message"]
        on_postgres = load_corpus(fresh_target, GOOD, "jsonl")
        assert first["counts"] == on_postgres.counts and first["rejections"] == on_postgres.rejections
        assert spark_rows(catalog, first["batch_id"]) == postgres_rows(fresh_target, on_postgres.batch_id)
        sentence_ids = sorted(s["sentence_id"] for s in table(catalog, "sentences"))
        assert sentence_ids == list(range(1, len(sentence_ids) + 1))  # dense, like an identity column

        # a bad document (found in a Spark task) fails the batch: one line, a 'failed' row, no rows
        code, _, stderr = cli.extract("corpus", "--format", "jsonl", str(bad))
        assert code == 2
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert (
            len(errors) == 1 and errors[0].startswith(f"error: {bad}:2: ") and "token boundaries" in errors[0]
        )
        batches = {b["batch_id"]: b for b in table(catalog, "load_batches")}
        failed = [b for b in batches.values() if b["status"] == "failed"]
        assert len(failed) == 1 and "token boundaries" in json.loads(failed[0]["options"])["error"]
        assert not any(r["batch_id"] == failed[0]["batch_id"] for r in table(catalog, "relation_instances"))

    with SparkCLI(catalog) as cli:  # a new process goes on from what the first one left
        # --replace: a new batch, the old one's rows gone; --skip-bad: bad records counted
        args = ["corpus", "--format", "jsonl", "--replace", "--skip-bad", str(GOOD), str(bad)]
        code, (replaced, skipped_bad), stderr = cli.extract(*args)
        assert code == 0, stderr
        assert (
            replaced["replaced_batches"] == [first["batch_id"]]
            and replaced["batch_id"] > failed[0]["batch_id"]
        )
        assert skipped_bad["counts"]["bad_lines"] == 2 and skipped_bad["counts"]["documents"] == 2
        # the reader's messages (read on the driver) come before those of the Spark tasks
        assert [m.split(": ")[0] for m in skipped_bad["bad_lines"]] == [f"{bad}:4", f"{bad}:2"]
        batches = {b["batch_id"]: b["status"] for b in table(catalog, "load_batches")}
        assert first["batch_id"] not in batches
        assert sorted(batches.values()) == ["failed", "loaded", "loaded"]
        loaded = {b for b, status in batches.items() if status == "loaded"}
        assert {r["batch_id"] for r in table(catalog, "relation_instances")} == loaded
        assert spark_rows(catalog, replaced["batch_id"]) == postgres_rows(fresh_target, on_postgres.batch_id)

        # other content at a loaded path is refused (and recorded as failed), as on Postgres
        loaded_bad = bad.read_bytes()
        # a line more (not a blank one: blank lines at the end are layout, not content)
        bad.write_bytes(loaded_bad + GOOD.read_text().splitlines()[2].encode() + b"\n")
        code, _, stderr = cli.extract("corpus", "--format", "jsonl", "--skip-bad", str(bad))
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert code == 2 and len(errors) == 1, stderr
        refused = f"a different version of this file is already loaded as batch {skipped_bad['batch_id']}"
        assert errors[0].startswith(f"error: {bad}: ") and refused in errors[0]
        bad.write_bytes(loaded_bad)

        # corpora: named by the file's stem; listed and removed (partitions dropped) like on Postgres
        assert replaced["corpus_name"] == GOOD.stem and skipped_bad["corpus_name"] == "bad"
        code, listing, stderr = cli.run("batches", "--json")
        assert code == 0, stderr
        assert sorted((b["status"], b["corpus_name"]) for b in json.loads(listing)) == [
            ("failed", "bad"),
            ("failed", "bad"),
            ("loaded", "bad"),
            ("loaded", GOOD.stem),
        ]
        code, _, stderr = cli.run("remove", "--corpus", "bad", "999")
        assert code == 2 and "error: raw.load_batches: no batch 999 (corpora loaded: " in stderr
        assert len(table(catalog, "load_batches")) == 4
        code, _, stderr = cli.run("remove", "--corpus", "bad")
        assert code == 0 and "removed 3 batch(es)" in stderr, stderr
        assert [b["batch_id"] for b in table(catalog, "load_batches")] == [replaced["batch_id"]]
        assert {r["batch_id"] for r in table(catalog, "relation_instances")} == {replaced["batch_id"]}
