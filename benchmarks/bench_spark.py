"""Benchmark: the pipeline on Spark local mode against Postgres on the same machine (`make bench-spark`).

1. Extraction: the demo generator's corpus loaded by the distributed extraction (sherliic-extract) with
   SHERLIIC_SPARK_MASTER=local[1] and local[2] (documents/s of the extraction phase, the scaling
   efficiency), next to the Postgres loader with 1 and 2 processes.
2. dbt: a synthetic TEG (benchmarks.synthetic_teg) of each size built by `dbt run` of the TEG marts on
   Postgres and, after copying the raw tables into a fresh Spark catalog, on Spark local[2]; wall time,
   per-model times (run_results.json), peak memory (Postgres: its backends; Spark: the dbt process with
   its JVM), marts' row counts on both.

Every figure is stored with the machine's load average at the time (the machine may be shared).
Writes out/bench/spark.json and out/bench/spark.md. ARGS: --docs-size N (demo generator size),
--sizes 1000000[,5000000].
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import click
import psutil
import pyarrow.parquet as pq

from benchmarks.bench_candidates import MARTS_SELECTOR, MemorySampler, run_sql_build
from benchmarks.reports import gib, write_report
from benchmarks.synthetic_teg import GeneratorConfig, generate
from builds.runner import run_dbt
from demo import generator
from extract.batches.store import MAX_KEPT_ERRORS
from extract.formats import reader
from extract.loading import load_corpus
from extract.pipeline import Extraction
from extract.spark_tasks import is_record, partition_records
from warehouse.command_line import CONTEXT, OUTPUT_FOLDER, json_object, run, target_options, version_option
from warehouse.scratch import scratch_database
from warehouse.settings import out_folder
from warehouse.target import ENGINES, Target

COUNTED_MARTS = ("typed_relations", "inference_candidates", "relations", "entities")


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def children() -> list[int]:
    """This process's descendants (dbt, its JVM, Spark's Python workers)."""
    return [p.pid for p in psutil.Process().children(recursive=True)]


def on_spark(target: Target, catalog: Path, master: str) -> Target:
    """The Target's settings on the Spark engine, with a catalog of its own and `master`."""
    spark = dataclasses.replace(target.spark, catalog_dir=catalog.resolve(), master=master)
    return dataclasses.replace(target.with_engine("spark"), spark=spark)


def spark_extraction(target: Target, corpus: Path, master: str, catalog: Path) -> dict:
    """`sherliic-extract corpus` on Spark in a child process; its extraction phase time and peak memory."""
    summary_file = catalog / "summary.json"
    env = on_spark(target, catalog, master).environment()
    argv = [sys.executable, "-m", "extract.cli", "--quiet", "--summary-json", str(summary_file)]
    # the file twice in one session (--replace): the second load runs on warm Python workers (spaCy
    # loaded), as every chunk but the first of a large corpus does; both loads are reported
    argv += ["corpus", "--format", "jsonl", "--replace", str(corpus), str(corpus)]
    load_before = load_average()
    start = time.perf_counter()
    with MemorySampler(children, pss=False) as memory:
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    cold, summary = json.loads(summary_file.read_text())
    documents = summary["counts"]["documents"]
    extract_s = summary["timings"]["extract_s"]
    return {
        "master": master,
        "documents": documents,
        "instances": summary["counts"]["instances"],
        "extract_s": extract_s,
        "docs_per_s": round(documents / extract_s, 1),
        "sentences_parsed": summary["reader_stats"]["sentences_parsed"],
        "sentences_per_s": round(summary["reader_stats"]["sentences_parsed"] / extract_s, 1),
        "batch_s": summary["seconds"],
        "process_wall_s": round(wall, 1),
        "peak_rss_bytes": memory.peak_rss,
        "write_s": summary["timings"]["write_s"],
        "cold_docs_per_s": round(documents / cold["timings"]["extract_s"], 1),
        "cold_batch_s": cold["seconds"],
        "load_average": [load_before, load_average()],
    }


def task_scaling(target: Target, corpus: Path, repeats: int) -> dict:
    """The extraction tasks alone in one warm local[2] session (child process): the corpus as 1 task
    vs 2 tasks, interleaved `repeats` times, so that both see the same machine load."""
    argv = [
        sys.executable,
        "-m",
        "benchmarks.bench_spark",
        "--scaling-child",
        str(corpus),
        "--repeats",
        str(repeats),
    ]
    env = on_spark(target, corpus.parent / "scaling-catalog", "local[2]").environment()
    done = subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _scaling_child(target: Target, corpus: Path, repeats: int) -> None:
    spark = target.spark_session("sherliic-bench-scaling")
    sc = spark.sparkContext
    documents = list(enumerate(reader("jsonl").read(corpus)))
    extraction = Extraction(source=str(corpus))

    def run(slices: int, items: list) -> float:
        start = time.perf_counter()
        tasks = partial(partition_records, extraction, MAX_KEPT_ERRORS)
        records = sc.parallelize(items, slices).mapPartitionsWithIndex(tasks)
        records.filter(is_record("p")).count()
        return time.perf_counter() - start

    run(2, documents[:64])  # both Python workers start and load spaCy
    runs: dict[str, list] = {"1": [], "2": []}
    for _ in range(repeats):
        for slices in (1, 2):
            before = load_average()
            seconds = run(slices, documents)
            runs[str(slices)].append({"s": round(seconds, 2), "load_average": [before, load_average()]})
    spark.stop()
    best = {k: min(r["s"] for r in v) for k, v in runs.items()}
    print(
        json.dumps(
            {
                "documents": len(documents),
                "runs": runs,
                "best_docs_per_s": {k: round(len(documents) / v, 1) for k, v in best.items()},
                "speedup_best": round(best["1"] / best["2"], 2),
            }
        )
    )


def postgres_extraction(target: Target, corpus: Path, processes: int) -> dict:
    with scratch_database(target, f"sherliic_bench_spark_extract_{processes}") as bench:
        load_before = load_average()
        summary = load_corpus(bench, corpus, "jsonl", processes=processes)
    documents = summary.counts["documents"]
    return {
        "processes": processes,
        "documents": documents,
        "instances": summary.counts["instances"],
        "batch_s": summary.seconds,
        "docs_per_s": round(documents / summary.seconds, 1),
        "load_average": [load_before, load_average()],
    }


def bench_extraction(target: Target, docs_size: int, work: Path, repeats: int = 3) -> dict:
    corpus_path, _, corpus = generator.write_corpus(work / "corpus", docs_size, generator.DEFAULT_SEED)
    print(f"extraction: {len(corpus.documents):,} documents (demo generator, size {docs_size})", flush=True)
    start = time.perf_counter()
    n_read = sum(1 for _ in reader("jsonl").read(corpus_path))
    read_s = time.perf_counter() - start
    spark = {}
    for master in ("local[1]", "local[2]"):
        spark[master] = spark_extraction(target, corpus_path, master, work / f"catalog-{master[6]}")
        print(
            f"  spark {master}: {spark[master]['docs_per_s']} docs/s (load {spark[master]['load_average']})"
        )
    scaling = task_scaling(target, corpus_path, repeats)
    print(f"  tasks, 1 vs 2 in one warm session: {scaling['best_docs_per_s']} docs/s", flush=True)
    postgres = {}
    for processes in (1, 2):
        postgres[processes] = postgres_extraction(target, corpus_path, processes)
        print(f"  postgres {processes} process(es): {postgres[processes]['docs_per_s']} docs/s")
    return {
        "documents": len(corpus.documents),
        # the reader runs on the driver: its rate bounds the cluster's extraction rate
        "driver_read_docs_per_s": round(n_read / read_s),
        "spark": spark,
        "postgres": postgres,
        "spark_scaling": round(spark["local[2]"]["docs_per_s"] / spark["local[1]"]["docs_per_s"], 2),
        "task_scaling": scaling,
        "postgres_scaling": round(postgres[2]["docs_per_s"] / postgres[1]["docs_per_s"], 2),
    }


def spark_dbt(postgres: Target, catalog: Path, dbt_vars: dict, target_dir: Path) -> dict:
    """The Postgres raw tables copied into a new Spark catalog (a child process), then `dbt run` there."""
    spark = on_spark(postgres, catalog, "local[2]")
    start = time.perf_counter()
    # the copy reads the Postgres side of its Target (this database) and writes the Spark catalog
    env = spark.on_postgres().environment()
    subprocess.run([sys.executable, "-m", "warehouse.spark_raw", "copy"], env=env, check=True)
    copy_s = time.perf_counter() - start
    load_before = load_average()
    start = time.perf_counter()
    with MemorySampler(children, pss=False) as memory:
        run_dbt(spark, ["run", "--select", *MARTS_SELECTOR, "--target-path", str(target_dir)], dbt_vars)
    wall = time.perf_counter() - start
    results = json.loads((target_dir / "run_results.json").read_text())
    models = {r["unique_id"].split(".")[-1]: round(r["execution_time"], 3) for r in results["results"]}
    marts = catalog / "spark-warehouse" / "warehouse.db"
    return {
        "copy_from_postgres_s": round(copy_s, 1),
        "wall_s": round(wall, 2),
        "models_s": dict(sorted(models.items(), key=lambda kv: -kv[1])),
        "peak_rss_bytes": memory.peak_rss,
        "counts": {table: pq.read_table(marts / table).num_rows for table in COUNTED_MARTS},
        "load_average": [load_before, load_average()],
    }


def bench_dbt(target: Target, n_instances: int, work: Path, dbt_vars: dict) -> dict:
    with scratch_database(target, f"sherliic_bench_spark_{n_instances}") as bench:
        graph = generate(bench, GeneratorConfig(n_instances=n_instances, seed=0), progress=True)
        load_before = load_average()
        postgres = run_sql_build(bench, dbt_vars, work / f"pg-target-{n_instances}")
        postgres["load_average"] = [load_before, load_average()]
        print(f"[{n_instances:,}] postgres dbt run {postgres['wall_s']} s", flush=True)
        spark = spark_dbt(
            bench, work / f"dbt-catalog-{n_instances}", dbt_vars, work / f"spark-target-{n_instances}"
        )
        print(f"[{n_instances:,}] spark local[2] dbt run {spark['wall_s']} s", flush=True)
    return {
        "instances": n_instances,
        "graph": graph.as_dict(),
        "postgres": postgres,
        "spark": spark,
        "spark_over_postgres": round(spark["wall_s"] / postgres["wall_s"], 2),
        "same_counts": spark["counts"] == postgres["counts"],
    }


PRICE_PER_CORE_HOUR = 0.048  # USD, on-demand general-purpose cloud vCPU (e.g. 4 vCPUs for $0.19/h)
CLUSTER_EFFICIENCY = 0.8  # share of the per-core rate a cluster keeps (stragglers, shuffle, driver)
PROJECTED_SENTENCES = (10**8, 10**9)
EXECUTORS = (8, 32, 128)  # of 4 cores each


def projection(report: dict) -> dict:
    """Wall time and cost of the extraction and the dbt build for 10^8 and 10^9 sentences on N executors
    of 4 cores, from the measured per-core rates: extraction sentences/s on local[1]; dbt instances/s
    per core on local[2]; instances per sentence of the benchmark corpus; linear scaling at
    CLUSTER_EFFICIENCY (the dbt models are joins and aggregations over hash-partitioned shuffles)."""
    one = report["extraction"]["spark"]["local[1]"]
    sentences_per_core_s = one["sentences_parsed"] / one["extract_s"]
    # the driver reads and ships the documents: at most this many sentences/s, whatever the cluster
    driver_sentences_s = (
        report["extraction"]["driver_read_docs_per_s"] * one["sentences_parsed"] / one["documents"]
    )
    instances_per_sentence = one["instances"] / one["sentences_parsed"]
    largest = report["dbt"][-1]
    dbt_instances_per_core_s = largest["instances"] / (largest["spark"]["wall_s"] * 2)
    rows = []
    for sentences in PROJECTED_SENTENCES:
        extract_core_h = sentences / sentences_per_core_s / 3600
        dbt_core_h = sentences * instances_per_sentence / dbt_instances_per_core_s / 3600
        for executors in EXECUTORS:
            cores = 4 * executors * CLUSTER_EFFICIENCY
            rows.append(
                {
                    "sentences": sentences,
                    "executors": executors,
                    "cores": 4 * executors,
                    "extract_wall_h": round(
                        max(extract_core_h / cores, sentences / driver_sentences_s / 3600), 2
                    ),
                    "driver_bound": extract_core_h / cores < sentences / driver_sentences_s / 3600,
                    "dbt_wall_h": round(dbt_core_h / cores, 2),
                    "core_hours": round((extract_core_h + dbt_core_h) / CLUSTER_EFFICIENCY),
                    "cost_usd": round(
                        (extract_core_h + dbt_core_h) / CLUSTER_EFFICIENCY * PRICE_PER_CORE_HOUR
                    ),
                }
            )
    return {
        "sentences_per_core_s": round(sentences_per_core_s, 1),
        "driver_sentences_per_s": round(driver_sentences_s),
        "instances_per_sentence": round(instances_per_sentence, 3),
        "dbt_instances_per_core_s": round(dbt_instances_per_core_s),
        "price_per_core_hour_usd": PRICE_PER_CORE_HOUR,
        "cluster_efficiency": CLUSTER_EFFICIENCY,
        "rows": rows,
    }


def projection_markdown(p: dict) -> list[str]:
    lines = [
        "## Projection to a cluster",
        "",
        f"Measured per core: extraction {p['sentences_per_core_s']} sentences/s (Spark local[1]), dbt "
        f"{p['dbt_instances_per_core_s']:,} instances/s (Spark local[2], largest size); "
        f"{p['instances_per_sentence']} relation instances per sentence (benchmark corpus); the driver reads "
        f"{p['driver_sentences_per_s']:,} sentences/s (one reader per load: extraction is driver-bound "
        "beyond that, marked *). Assumed: "
        f"{p['cluster_efficiency']:.0%} of the per-core rate on a cluster, ${p['price_per_core_hour_usd']} "
        "per core-hour, executors of 4 cores.",
        "",
        "| sentences | executors (cores) | extraction wall h | dbt wall h | core-hours | cost USD |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in p["rows"]:
        lines.append(
            f"| {r['sentences']:.0e} | {r['executors']} ({r['cores']}) | {r['extract_wall_h']}"
            f"{'*' if r['driver_bound'] else ''} "
            f"| {r['dbt_wall_h']} | {r['core_hours']:,} | {r['cost_usd']:,} |"
        )
    return lines


def markdown(report: dict) -> str:
    lines = [
        "# Spark benchmark (`make bench-spark`)",
        "",
        f"Machine: {report['machine']['cpus']} CPUs, {gib(report['machine']['memory_bytes'])} RAM, shared "
        "with other jobs: the load average (1 min, before/after) is given with every figure.",
        "",
    ]
    if "extraction" in report:
        if report.get("extraction_from_previous_run"):
            lines += ["(Extraction: the figures of the previous run; this run measured dbt only.)", ""]
        lines += extraction_markdown(report["extraction"])
    if report.get("dbt_from_previous_run"):
        lines += ["(dbt: the figures of the previous run; this run measured the extraction only.)", ""]
    lines += dbt_markdown(report["dbt"])
    if "projection" in report:
        lines += ["", *projection_markdown(report["projection"])]
    return "\n".join(lines) + "\n"


def extraction_markdown(ex: dict) -> list[str]:
    lines = [
        f"## Extraction ({ex['documents']:,} demo documents)",
        "",
        "| engine | workers | docs/s | extraction s | row writes s | batch s | cold docs/s (first load) "
        "| process wall s (2 loads) | peak RSS | load avg |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for master, r in ex["spark"].items():
        lines.append(
            f"| Spark | {master} | {r['docs_per_s']} | {r['extract_s']} | {r['write_s']} | {r['batch_s']} "
            f"| {r['cold_docs_per_s']} | {r['process_wall_s']} | {gib(r['peak_rss_bytes'])} "
            f"| {r['load_average']} |"
        )
    for processes, r in ex["postgres"].items():
        lines.append(
            f"| Postgres | {processes} process(es) | {r['docs_per_s']} | – | – | {r['batch_s']} | – | – | – "
            f"| {r['load_average']} |"
        )
    lines += [
        "",
        f"Scaling local[1] → local[2] (two separate runs): {ex['spark_scaling']}× on Spark, "
        f"{ex['postgres_scaling']}× on Postgres (1 → 2 processes).",
        "",
        f"Scaling of the extraction tasks in one warm local[2] session, 1 task vs 2 tasks over the "
        f"{ex['task_scaling']['documents']:,} documents, interleaved {len(ex['task_scaling']['runs']['1'])} "
        f"times (best): {ex['task_scaling']['best_docs_per_s']['1']} → "
        f"{ex['task_scaling']['best_docs_per_s']['2']} docs/s = **{ex['task_scaling']['speedup_best']}×** "
        "(goal ≥ 1.8×); runs and load averages in spark.json.",
        "",
    ]
    return lines


def dbt_markdown(rows: list[dict]) -> list[str]:
    lines = [
        "## dbt run of the TEG marts (synthetic TEG)",
        "",
        "| instances | Postgres s | Spark local[2] s | Spark / Postgres | copy to Spark s "
        "| peak PG backends RSS | peak dbt+JVM RSS | same counts | load avg (PG; Spark) |",
        "|---:|---:|---:|---:|---:|---:|---:|:--:|---|",
    ]
    for r in rows:
        pg, sp = r["postgres"], r["spark"]
        lines.append(
            f"| {r['instances']:,} | {pg['wall_s']} | {sp['wall_s']} | {r['spark_over_postgres']}× "
            f"| {sp['copy_from_postgres_s']} | {gib(pg['peak_backend_rss_bytes'])} "
            f"| {gib(sp['peak_rss_bytes'])} | {'yes' if r['same_counts'] else 'NO'} "
            f"| {pg['load_average']}; {sp['load_average']} |"
        )
    for r in rows:
        pg, sp = r["postgres"]["models_s"], r["spark"]["models_s"]
        lines += [
            "",
            f"Slowest models at {r['instances']:,} instances (seconds, Spark vs Postgres):",
            "",
            "| model | Spark | Postgres |",
            "|---|---:|---:|",
        ]
        lines += [f"| {m} | {t} | {pg.get(m, '–')} |" for m, t in list(sp.items())[:12]]
        lines.append(
            f"| all {len(sp)} models | {round(sum(sp.values()), 1)} | {round(sum(pg.values()), 1)} |"
        )
    return lines


@click.command(context_settings=CONTEXT, help=__doc__.splitlines()[0])
@version_option
@click.option(
    "--docs-size", type=int, default=120, show_default=True, help="Demo generator size (~25 docs a unit)."
)
@click.option("--sizes", default="1000000", show_default=True, help="Synthetic TEG sizes, comma-separated.")
@click.option(
    "--vars",
    "dbt_vars",
    default="{}",
    callback=json_object,
    help="dbt vars as JSON (default: the paper's thresholds).",
)
@click.option("--skip-extraction", is_flag=True)
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    default=lambda: out_folder() / "bench",
    show_default="out/bench",
)
@click.option("--repeats", type=int, default=3, show_default=True, help="Task-scaling repeats (interleaved).")
@click.option("--scaling-child", type=click.Path(path_type=Path), hidden=True)
@target_options(engines=ENGINES)
def cli(
    target: Target,
    docs_size: int,
    sizes: str,
    dbt_vars: dict,
    skip_extraction: bool,
    out: Path,
    repeats: int,
    scaling_child: Path | None,
) -> None:
    if scaling_child:  # a child process of task_scaling: its Target is the Spark engine
        _scaling_child(target, scaling_child, repeats)
        return
    # the bench databases are made on the server of the Postgres side (DATABASE_URL's, else embedded)
    target = target.on_postgres()
    report: dict = {
        "machine": {"cpus": os.cpu_count(), "memory_bytes": psutil.virtual_memory().total},
        "dbt_vars": dbt_vars,
    }
    work = Path(tempfile.mkdtemp(prefix="bench_spark_"))
    try:
        if not skip_extraction:
            report["extraction"] = bench_extraction(target, docs_size, work, repeats)
        report["dbt"] = [bench_dbt(target, int(n), work, dbt_vars) for n in sizes.split(",") if n]
        previous = out / "spark.json"
        # a part not measured this time (--skip-extraction, --sizes ''): the last run's figures, marked
        last = json.loads(previous.read_text()) if previous.exists() else {}
        if not report["dbt"] and last.get("dbt"):
            report["dbt"], report["dbt_from_previous_run"] = last["dbt"], True
        if "extraction" not in report and last.get("extraction"):
            report["extraction"], report["extraction_from_previous_run"] = last["extraction"], True
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if "extraction" in report and report["dbt"]:
        report["projection"] = projection(report)
    write_report(out, "spark", report, markdown(report))
    print(markdown(report))


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="python -m benchmarks.bench_spark")


if __name__ == "__main__":
    sys.exit(main())
