"""The main job on a Spark cluster equals the main job on Postgres (`make test-cluster`; needs the [spark]
extra and Java 17, skipped with a message otherwise). The demo corpus, built once at its minimum size on a
standalone cluster (tests/spark_cluster.py: spark-submit loads with a worker killed, dbt through the Thrift
server, the export from a session), gives the same release files, relation instances, typed relations and
InfCands (scores to 1e-9); dbt's data and unit tests pass on that catalog; the ranking and the
warehouse-backed baselines score alike on both engines. The local-mode loader and dbt's session:
tests/test_spark_load.py, tests/test_spark_engine.py."""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from baselines.distributional import cached_scores, resolve_keys
from baselines.rel_embeddings import edge_query
from builds.runner import run_dbt
from demo.job import DemoSummary, collect_summary
from demo.relations import PLANTED_RULES
from deppath.paths import reverse_path
from evaluation import catalog
from evaluation.datasets import warehouse_coverage
from evaluation.evaluate import evaluate_many
from evaluation.registry import Context
from extract.summary import database_summary
from lm.rank.ranking import RankSettings, rank_candidates, rank_in_child_process
from release.export import export
from tests.spark_cluster import (
    LOAD_APP,
    ClusterDemo,
    build_demo_on_cluster,
    event_logs,
    needs_cluster,
    spark_properties,
    task_executors,
)
from tests.test_lm_rank import bench_verifier, needs_lm, stored
from tests.test_spark_load import table
from warehouse.target import Marts, Target

# the natural columns of a relation instance with its sentence (ids differ between engines' loads)
INSTANCE_COLUMNS = ["document_id", "line_number", "sentence_index", "text", "path", "arg1_entity_id"]
INSTANCE_COLUMNS += ["arg2_entity_id", "subject_side"]
SCORES = ("relv", "sigma", "esr", "score")
DISTRIBUTIONAL = ("WeedsPrec", "invCL", "WeedsPMI", "Lin ", "BInc")


def spark_instances(catalog) -> list[tuple]:
    """The loaded relation instances of the Spark catalog with their sentences, read from Parquet."""
    sentences = {row["sentence_id"]: row for row in table(catalog, "sentences")}
    batches = {row["batch_id"] for row in table(catalog, "load_batches") if row["status"] == "loaded"}
    rows = []
    for instance in table(catalog, "relation_instances"):
        if instance["batch_id"] in batches:
            rows.append(
                tuple({**sentences[instance["sentence_id"]], **instance}[c] for c in INSTANCE_COLUMNS)
            )
    return sorted(rows)


def postgres_instances(target: Target) -> list[tuple]:
    sentence_columns = ("document_id", "line_number", "sentence_index", "text")
    columns = ", ".join(f"s.{c}" if c in sentence_columns else f"i.{c}" for c in INSTANCE_COLUMNS)
    with target.connect() as conn:
        rows = conn.execute(
            f"select {columns} from raw.relation_instances i join raw.sentences s using (sentence_id) "
            "join raw.load_batches b on b.batch_id = i.batch_id where b.status = 'loaded'"
        ).fetchall()
    return sorted(rows)


def rules(path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text()), delimiter="\t"))


def benchmark_items(rules: list[dict]) -> pd.DataFrame:
    """Benchmark items over the demo's graph, in SherLIiC orientation: each InfCand as an item (crossed
    ones with the hypothesis read from its other end), the same with the two sides swapped, with types
    spelled as in other resources (upper case: matched after normalisation), without types, and one
    item whose hypothesis is not in the warehouse."""
    planted = {(r.premise_path, r.hypothesis_path, r.alignment) for r in PLANTED_RULES}
    rows = []
    for rule in rules:
        crossed = rule["alignment"] == "crossed"
        hypothesis = reverse_path(rule["conclusion_path"]) if crossed else rule["conclusion_path"]
        ha, hb = rule["conclusion_type_a"], rule["conclusion_type_b"]
        item = {
            "premise_path": rule["premise_path"],
            "hypothesis_path": hypothesis,
            "premise_type_a": rule["premise_type_a"],
            "premise_type_b": rule["premise_type_b"],
            "hypothesis_type_a": hb if crossed else ha,
            "hypothesis_type_b": ha if crossed else hb,
            "label": (rule["premise_path"], rule["conclusion_path"], rule["alignment"]) in planted,
        }
        swapped = {
            **item,
            "premise_path": item["hypothesis_path"],
            "hypothesis_path": item["premise_path"],
            "premise_type_a": item["hypothesis_type_a"],
            "premise_type_b": item["hypothesis_type_b"],
            "hypothesis_type_a": item["premise_type_a"],
            "hypothesis_type_b": item["premise_type_b"],
            "label": False,
        }
        shouted = {**item, **{k: item[k].upper() for k in item if k.endswith(("_type_a", "_type_b"))}}
        untyped = {**item, **{k: None for k in item if k.endswith(("_type_a", "_type_b"))}}
        rows += [item, swapped, shouted, untyped]
    rows.append({**rows[0], "hypothesis_path": "nsubj^-___not_in_the_demo___dobj", "label": False})
    items = pd.DataFrame(rows)
    items["dataset"], items["split"] = "demo", "dev"
    items["item_id"] = [f"i{n}" for n in range(len(items))]
    return items


def warehouse_baselines(items: pd.DataFrame, marts: Marts) -> dict:
    """Everything the warehouse-backed baselines read or compute, on one engine's marts."""
    names = [n for n in catalog.ordered_names() if n.startswith(DISTRIBUTIONAL)] + ["Sherlock+ESR"]
    ctx = Context(marts=marts)
    evaluation = evaluate_many(names, items, ctx, show_progress=False, on_top_of_lemma=False)
    assert not evaluation.failed and not evaluation.skipped, (evaluation.failed, evaluation.skipped)
    return {
        # the set-based scores the evaluation computed (once per variant, memoised in its context)
        "scores": {v: cached_scores(items, ctx, v) for v in ("untyped", "typed")},
        "keys": {v: resolve_keys(items, marts, v) for v in ("untyped", "typed")},
        # the relation-embedding corpus (its training is seeded; 3 gensim threads are not deterministic)
        "corpora": {v: marts.rows(edge_query(v, marts.type("text"))) for v in ("untyped", "typed")},
        "coverage": warehouse_coverage(items, marts),
        "results": evaluation.frame(),
    }


def assert_same_baselines(on_spark: dict, on_postgres: dict) -> None:
    close = {"rtol": 1e-9, "atol": 0, "check_exact": False}
    for variant in ("untyped", "typed"):
        pd.testing.assert_frame_equal(on_spark["scores"][variant], on_postgres["scores"][variant], **close)
        pd.testing.assert_frame_equal(on_spark["keys"][variant], on_postgres["keys"][variant], **close)
        assert on_spark["corpora"][variant] == on_postgres["corpora"][variant], variant
    pd.testing.assert_frame_equal(on_spark["coverage"], on_postgres["coverage"])
    pd.testing.assert_frame_equal(on_spark["results"], on_postgres["results"], **close)


def assert_same_release_files(spark_files: Path, postgres_files: Path, n_candidates: int) -> None:
    """Identical release files, except that scores may differ in the last bits (summation order)."""
    for name in ("teg.tsv", "teg-untyped.tsv", "relation_index.tsv", "entity_index.tsv", "type_index.json"):
        assert (spark_files / name).read_bytes() == (postgres_files / name).read_bytes(), name
    spark_rules, postgres_rules = rules(spark_files / "rules.tsv"), rules(postgres_files / "rules.tsv")
    assert len(spark_rules) == len(postgres_rules) == n_candidates > 20, "a non-trivial graph"
    for s, p in zip(spark_rules, postgres_rules, strict=True):
        assert {k: v for k, v in s.items() if k not in SCORES} == {
            k: v for k, v in p.items() if k not in SCORES
        }
        for key in SCORES:
            assert math.isclose(float(s[key]), float(p[key]), rel_tol=1e-9), (key, s, p)


@dataclass(frozen=True)
class Demos:
    """The demo at its minimum size built on a standalone cluster, the same on Postgres, and a Target in
    local mode on the catalog the cluster built (what a user's later commands on that catalog see)."""

    cluster: ClusterDemo
    postgres: Target
    spark: Target


@pytest.fixture(scope="module")
def demos(make_target, tmp_path_factory) -> Demos:
    """Built once for this module's tests, which run in the order written: the cluster's own checks, dbt's
    tests and the ranking use the catalog from child processes, the comparison last from this process (a
    process that opened a Spark session holds the catalog's one-process Derby metastore until it exits)."""
    postgres = make_target()
    cluster = build_demo_on_cluster(tmp_path_factory.mktemp("cluster"), postgres)
    environ = {**os.environ, "SHERLIIC_SPARK_DIR": str(cluster.catalog), "DATABASE_URL": make_target().url()}
    return Demos(cluster, postgres, Target.from_environment(environ, engine="spark"))


@needs_cluster
@pytest.mark.cluster
def test_the_demo_on_a_standalone_cluster_equals_postgres(demos: Demos):
    """make test-cluster: a master and two workers (separate processes, working directories of their
    own); the project packed by `make spark-package` for workers whose Python has nothing installed;
    the demo's types and corpus loaded by spark-submit (a worker killed in the middle of the corpus
    load), dbt through the Thrift server (ANSI mode on, Spark 4's default), the export through a
    session whose master is only in spark-defaults.conf: the release files equal Postgres'."""
    cluster = demos.cluster
    # each application ran on the cluster with its settings: spark-defaults.conf's, the --conf over them
    applications = event_logs(cluster.root / "events")
    types_events, corpus_events = [events for name, events in applications if name == LOAD_APP]
    warehouse = (cluster.catalog / "spark-warehouse").as_uri()
    for app, partitions in ((types_events, "4"), (corpus_events, "3")):
        properties = spark_properties(app)
        assert properties["spark.master"] == cluster.master
        assert properties["spark.sql.warehouse.dir"].rstrip("/") == warehouse.rstrip("/")
        assert properties["spark.sql.shuffle.partitions"] == partitions
        assert task_executors(app) and "driver" not in task_executors(app)
    assert any(e["Event"] == "SparkListenerExecutorRemoved" for e in corpus_events), "no executor lost"
    lost = [e for e in corpus_events if e["Event"] == "SparkListenerTaskEnd"]
    assert any(e["Task End Reason"]["Reason"] == "ExecutorLostFailure" for e in lost), "no task lost"
    assert (cluster.catalog / "metastore_db").is_dir()
    ((_, export_events),) = [item for item in applications if item[0] == "sherliic-marts"]
    assert spark_properties(export_events)["spark.master"] == cluster.master
    assert task_executors(export_events) and "driver" not in task_executors(export_events)
    assert_same_release_files(cluster.spark_files, cluster.postgres_files, cluster.on_postgres.n_candidates)


@needs_cluster
@pytest.mark.cluster
def test_the_data_and_unit_tests_pass_on_spark(demos: Demos):
    """dbt's data tests and unit tests on the Spark catalog (dbt-spark's session in local mode; the same
    SQL as through the Thrift server)."""
    run_dbt(demos.spark, ["--quiet", "test"], {"corpora": ["demo"]})


def spark_summary(demos: Demos) -> DemoSummary:
    """The Spark demo's summary, read from its catalog in this process (as the demo job reads it)."""
    (corpus_batch,) = [
        b["batch_id"]
        for b in table(demos.cluster.catalog, "load_batches")
        if (b["kind"], b["status"]) == ("corpus", "loaded")
    ]
    on_postgres = demos.cluster.on_postgres
    summary = DemoSummary(
        demos.spark, on_postgres.corpus_path, on_postgres.types_path, on_postgres.size, on_postgres.seed
    )
    collect_summary(summary, corpus_batch)
    return summary


@needs_cluster
@needs_lm
@pytest.mark.cluster
def test_spark_ranks_like_postgres(demos: Demos, lm_cache, tmp_path):
    """The ranking uses the Spark catalog from a child process (the export after it uses it here); the mart
    candidate_verifier_scores, a view, shows the ranking with no dbt run."""
    postgres, spark = demos.postgres, demos.spark
    verifier = bench_verifier(lm_cache)
    settings = RankSettings(
        backend="onnx-fp32", threads=1, chunk_size=64, cache_dir=lm_cache, show_progress=False
    )
    on_postgres = rank_candidates(postgres, verifier, settings)
    on_spark = rank_in_child_process(spark, verifier, settings)  # then this process may use the catalog
    assert on_spark.candidates == on_postgres.candidates == on_spark.scored > 64  # several chunks and waves
    a = stored(postgres, verifier, "onnx-fp32").set_index("candidate_key")
    b = stored(spark, verifier, "onnx-fp32").set_index("candidate_key").loc[a.index]
    assert (a["premise_sentence"] == b["premise_sentence"]).all()
    assert (a["hypothesis_sentence"] == b["hypothesis_sentence"]).all()
    np.testing.assert_allclose(b["verifier_score"], a["verifier_score"], atol=1e-5, rtol=0)
    assert rank_in_child_process(spark, verifier, settings).scored == 0  # a re-run is a no-op on Spark too

    # the copy in the Spark catalog feeds the mart (a view) and the export there
    with spark.marts() as marts:
        (n,) = marts.one("select count(*) from warehouse.candidate_verifier_scores")
    assert n == on_spark.candidates
    files = export(spark, tmp_path / "export-spark")
    assert files.rows["rules_verifier.tsv"] == files.rows["rules.tsv"]


@needs_cluster
@pytest.mark.cluster
def test_demo_on_spark_equals_postgres(demos: Demos):
    """The demo's summary, the loaded instances, the raw tables' counts and the warehouse-backed baselines
    are the same on both engines (the release files: the cluster test above)."""
    postgres, spark_target, on_postgres = demos.postgres, demos.spark, demos.cluster.on_postgres
    on_spark = spark_summary(demos)
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

    assert spark_instances(demos.cluster.catalog) == postgres_instances(postgres)
    assert database_summary(spark_target) == database_summary(postgres)

    postgres_rules = rules(demos.cluster.postgres_files / "rules.tsv")
    # the baselines that read the marts score alike on both engines
    items = benchmark_items(postgres_rules)
    with postgres.marts() as marts:
        baselines_on_postgres = warehouse_baselines(items, marts)
    with spark_target.marts() as marts:
        baselines_on_spark = warehouse_baselines(items, marts)
    assert baselines_on_postgres["results"]["n_covered"].min() > 0, "the comparison needs covered items"
    assert_same_baselines(baselines_on_spark, baselines_on_postgres)
