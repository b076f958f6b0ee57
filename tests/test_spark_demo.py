"""The main job on Spark equals the main job on Postgres: the demo corpus extracted by the distributed
extraction and built by dbt on Spark local mode gives the same relation instances, typed relations and
InfCands (scores to 1e-9) and the same release files (needs the [spark] extra and Java 17; skipped with
a message otherwise). The demo is built at its minimum size to keep the test within a few minutes."""

from __future__ import annotations

import csv
import io
import math

import pyarrow.dataset as ds
import pytest
from rich.console import Console

from demo import generator
from demo.job import run_demo
from tests.test_spark_engine import needs_spark
from warehouse.export import export
from warehouse.server import connect

# the natural columns of a relation instance with its sentence (ids differ between engines' loads)
INSTANCE_COLUMNS = ["document_id", "line_number", "sentence_index", "text", "path", "arg1_entity_id"]
INSTANCE_COLUMNS += ["arg2_entity_id", "subject_side"]
SCORES = ("relv", "sigma", "esr", "score")


def spark_instances(catalog) -> list[tuple]:
    """The loaded relation instances of the Spark catalog with their sentences, read from Parquet."""
    tables = catalog / "spark-warehouse" / "raw.db"

    def read(table: str):
        return ds.dataset(tables / table, format="parquet", partitioning="hive").to_table().to_pylist()

    sentences = {row["sentence_id"]: row for row in read("sentences")}
    batches = {row["batch_id"] for row in read("load_batches") if row["status"] == "loaded"}
    rows = []
    for instance in read("relation_instances"):
        if instance["batch_id"] in batches:
            rows.append(
                tuple({**sentences[instance["sentence_id"]], **instance}[c] for c in INSTANCE_COLUMNS)
            )
    return sorted(rows)


def postgres_instances(url: str) -> list[tuple]:
    sentence_columns = ("document_id", "line_number", "sentence_index", "text")
    columns = ", ".join(f"s.{c}" if c in sentence_columns else f"i.{c}" for c in INSTANCE_COLUMNS)
    with connect(url) as conn:
        rows = conn.execute(
            f"select {columns} from raw.relation_instances i join raw.sentences s using (sentence_id) "
            "join raw.load_batches b on b.batch_id = i.batch_id where b.status = 'loaded'"
        ).fetchall()
    return sorted(rows)


def rules(path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text()), delimiter="\t"))


@needs_spark
@pytest.mark.slow
def test_demo_on_spark_equals_postgres(fresh_db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("SHERLIIC_SPARK_DIR", str(tmp_path / "spark"))
    quiet = Console(file=io.StringIO())
    size = generator.MIN_SIZE
    on_postgres = run_demo(fresh_db_url, size=size, out_dir=tmp_path / "demo", processes=1, console=quiet)
    on_spark = run_demo(size=size, out_dir=tmp_path / "demo", console=quiet, engine="spark")

    assert on_postgres.n_candidates > 20, "the comparison needs a non-trivial graph"
    for attr in ("n_documents", "n_sentences", "n_mentions", "n_instances", "rejections", "n_entities"):
        assert getattr(on_spark, attr) == getattr(on_postgres, attr), attr
    for attr in ("n_relations", "n_typed_relations", "n_candidates", "candidate_kinds", "evidence"):
        assert getattr(on_spark, attr) == getattr(on_postgres, attr), attr
    for spark_rule, postgres_rule in zip(on_spark.planted, on_postgres.planted, strict=True):
        assert (spark_rule.rank, spark_rule.premise_types) == (
            postgres_rule.rank,
            postgres_rule.premise_types,
        )
        for attr in ("relv", "sigma", "esr"):
            s, p = getattr(spark_rule, attr), getattr(postgres_rule, attr)
            assert (s is None and p is None) or math.isclose(s, p, rel_tol=1e-9), (spark_rule.rule.name, attr)

    assert spark_instances(tmp_path / "spark") == postgres_instances(fresh_db_url)

    # the release files: identical, except that scores may differ in the last bits (summation order)
    postgres_files = export(tmp_path / "export-postgres", fresh_db_url).out_dir
    spark_files = export(tmp_path / "export-spark", engine="spark").out_dir
    for name in ("teg.tsv", "teg-untyped.tsv", "relation_index.tsv", "entity_index.tsv", "type_index.json"):
        assert (spark_files / name).read_bytes() == (postgres_files / name).read_bytes(), name
    spark_rules, postgres_rules = rules(spark_files / "rules.tsv"), rules(postgres_files / "rules.tsv")
    assert len(spark_rules) == len(postgres_rules) == on_postgres.n_candidates
    for s, p in zip(spark_rules, postgres_rules, strict=True):
        assert {k: v for k, v in s.items() if k not in SCORES} == {
            k: v for k, v in p.items() if k not in SCORES
        }
        for key in SCORES:
            assert math.isclose(float(s[key]), float(p[key]), rel_tol=1e-9), (key, s, p)
