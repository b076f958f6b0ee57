"""Distributed extraction on Spark (extract.spark_load through `sherliic-extract` with SHERLIIC_ENGINE=spark):
the same rows as the Postgres loader, and the same batch bookkeeping (checksum, skip, --replace,
--skip-bad, `file:line: problem`, no partial batch). Each CLI run is its own process (the local catalog's
Derby metastore admits one process at a time); the tables are read back from their Parquet files."""

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


def spark_extract(catalog: Path, *args: str) -> tuple[int, list[dict], str]:
    """`sherliic-extract ARGS` on Spark local[2]: exit code, batch summaries, stderr."""
    summary = catalog.parent / "summary.json"
    summary.unlink(missing_ok=True)
    env = {**os.environ, "SHERLIIC_ENGINE": "spark", "SHERLIIC_SPARK_DIR": str(catalog)}
    argv = [sys.executable, "-m", "extract.cli", "--quiet", "--summary-json", str(summary), *args]
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    return done.returncode, json.loads(summary.read_text()) if summary.exists() else [], done.stderr


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
    code, summaries, stderr = spark_extract(catalog, "corpus", "--format", "jsonl", str(GOOD), str(copy))
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
    code, _, stderr = spark_extract(catalog, "corpus", "--format", "jsonl", str(bad))
    assert code == 2
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {bad}:2: ") and "token boundaries" in errors[0]
    batches = {b["batch_id"]: b for b in table(catalog, "load_batches")}
    failed = [b for b in batches.values() if b["status"] == "failed"]
    assert len(failed) == 1 and "token boundaries" in json.loads(failed[0]["options"])["error"]
    assert not any(r["batch_id"] == failed[0]["batch_id"] for r in table(catalog, "relation_instances"))

    # --replace: a new batch, the old one's rows gone; --skip-bad: bad records counted
    args = ["corpus", "--format", "jsonl", "--replace", "--skip-bad", str(GOOD), str(bad)]
    code, (replaced, skipped_bad), stderr = spark_extract(catalog, *args)
    assert code == 0, stderr
    assert (
        replaced["replaced_batches"] == [first["batch_id"]] and replaced["batch_id"] > failed[0]["batch_id"]
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
    code, _, stderr = spark_extract(catalog, "corpus", "--format", "jsonl", "--skip-bad", str(bad))
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1, stderr
    refused = f"a different version of this file is already loaded as batch {skipped_bad['batch_id']}"
    assert errors[0].startswith(f"error: {bad}: ") and refused in errors[0]
    bad.write_bytes(loaded_bad)

    # corpora: named by the file's stem; listed and removed (partitions dropped) like on Postgres
    assert replaced["corpus_name"] == GOOD.stem and skipped_bad["corpus_name"] == "bad"
    listing = spark_cli(catalog, "batches", "--json")
    assert listing.returncode == 0, listing.stderr
    assert sorted((b["status"], b["corpus_name"]) for b in json.loads(listing.stdout)) == [
        ("failed", "bad"),
        ("failed", "bad"),
        ("loaded", "bad"),
        ("loaded", GOOD.stem),
    ]
    unknown = spark_cli(catalog, "remove", "--corpus", "bad", "999")
    assert (
        unknown.returncode == 2
        and "error: raw.load_batches: no batch 999 (corpora loaded: " in unknown.stderr
    )
    assert len(table(catalog, "load_batches")) == 4
    removed = spark_cli(catalog, "remove", "--corpus", "bad")
    assert removed.returncode == 0 and "removed 3 batch(es)" in removed.stderr, removed.stderr
    assert [b["batch_id"] for b in table(catalog, "load_batches")] == [replaced["batch_id"]]
    assert {r["batch_id"] for r in table(catalog, "relation_instances")} == {replaced["batch_id"]}


def spark_cli(catalog: Path, *args: str) -> subprocess.CompletedProcess:
    """`sherliic-extract ARGS` on the Spark catalog, output captured."""
    env = {**os.environ, "SHERLIIC_ENGINE": "spark", "SHERLIIC_SPARK_DIR": str(catalog)}
    argv = [sys.executable, "-m", "extract.cli", "--quiet", *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True)
