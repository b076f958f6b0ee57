"""Benchmark: candidate build (typed relations + InfCands) in SQL/dbt vs the Python reference.

For each graph size: a dedicated database, a synthetic TEG (benchmarks.synthetic_teg), `dbt run` of the
TEG marts profiled as benchmarks.profile_candidates does it: per model its time (dbt's run_results.json),
rows, Postgres CPU seconds and peak memory, and with --explain (the default) its temp bytes and the plan's
dominant node (EXPLAIN (ANALYZE, BUFFERS), run after the build: not in its time); peak memory of the
Postgres backends serving the bench database (sampled with psutil: RSS sum and PSS sum, PSS counts shared
buffers once), temp-file bytes spilled, the load average; up to --reference-max instances the
plain-Python reference (benchmarks.reference) in a child process with its peak RSS, plus an exact
equality check of the marts against it, right after each of the last --reference-repeat builds (the
speed-up is the median of these pairs' ratios: the machine's speed drifts within a bench, and a pair
run back to back sees the same machine); at --incremental-at instances the incremental row
(benchmarks.bench_incremental: --incremental-share more instances, an incremental build vs
--full-refresh, marts compared). The database is vacuumed, untimed, before each timed step; with
--repeat N every build is run N times and the median run reported. Writes out/bench/candidates.json and
out/bench/candidates.md and prints them.

`make bench-candidates` (ARGS='--sizes 1000000,5000000' for a shorter run).
"""

from __future__ import annotations

import json
import math
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import psutil

from benchmarks import bench_incremental, reports
from benchmarks.profile_candidates import (
    MARTS_SELECTOR,
    median_run,
    parse_sizes,
    profile_dbt_run,
    repeat_option,
    vacuum_database,
)
from benchmarks.reference import compare_with_marts
from benchmarks.reports import gib
from benchmarks.synthetic_teg import GeneratorConfig, generate, shape_options
from warehouse.command_line import CONTEXT, OUTPUT_FOLDER, json_object, run, target_options, version_option
from warehouse.errors import print_error
from warehouse.scratch import scratch_database
from warehouse.settings import out_folder
from warehouse.target import Target


class MemorySampler:
    """Background sampling of a set of processes' memory; keeps the peak of the sums."""

    def __init__(self, pids_fn, interval: float = 0.5, pss: bool = True) -> None:
        self.pids_fn = pids_fn
        self.interval = interval
        self.pss = pss
        self.peak_rss = 0
        self.peak_pss = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            rss = pss = 0
            for pid in self.pids_fn():
                try:
                    proc = psutil.Process(pid)
                    if self.pss:
                        info = proc.memory_full_info()
                        rss += info.rss
                        pss += info.pss
                    else:
                        rss += proc.memory_info().rss
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_pss = max(self.peak_pss, pss)
            self.samples += 1
            self._stop.wait(self.interval)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def run_sql_build(
    target: Target, dbt_vars: dict, target_dir: Path, explain: bool = False, full_refresh: bool = False
) -> dict:
    """The profiled `dbt run` of the TEG marts (benchmarks.profile_candidates) with the marts' counts."""
    # not --quiet: dbt prints each model's time as it finishes (progress of long builds)
    args = ["run", "--select", *MARTS_SELECTOR, *(["--full-refresh"] if full_refresh else [])]
    profile = profile_dbt_run(target, args, dbt_vars, target_dir, explain=explain)
    schema = target.marts_schema
    with target.connect() as c:
        counts = {
            table: c.execute(f"select count(*) from {schema}.{table}").fetchone()[0]
            for table in ("typed_relations", "inference_candidates", "relations", "entities")
        }
        by_alignment = dict(
            c.execute(f"select alignment, count(*) from {schema}.inference_candidates group by 1").fetchall()
        )
    return {
        **profile,
        "models_s": {name: m["seconds"] for name, m in profile["models"].items()},
        "counts": counts,
        "candidates_by_alignment": by_alignment,
    }


def run_reference(target: Target, dbt_vars: dict, out_pickle: Path) -> dict:
    """The Python reference in a child process (its own peak RSS) on the Target's warehouse (handed over in
    the child's environment), result pickled to out_pickle."""
    code = (
        "import pickle, sys, time\n"
        "from benchmarks.reference import Params, compute_from_db\n"
        "from warehouse.target import Target\n"
        "t = time.perf_counter()\n"
        f"r = compute_from_db(Target.from_environment(), Params.from_vars({dbt_vars!r}))\n"
        "r.timings['total_s'] = time.perf_counter() - t\n"
        f"pickle.dump(r, open({str(out_pickle)!r}, 'wb'))\n"
    )
    start = time.perf_counter()
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=str(root), env=target.environment())
    with MemorySampler(lambda: [proc.pid], interval=0.5, pss=False) as mem:
        rc = proc.wait()
    wall = time.perf_counter() - start
    if rc != 0:
        raise RuntimeError(f"reference failed with exit code {rc}")
    with open(out_pickle, "rb") as fh:
        result = pickle.load(fh)
    return {
        "wall_s": round(wall, 2),
        "timings_s": {k: round(v, 2) for k, v in result.timings.items()},
        "peak_rss_bytes": mem.peak_rss,
        "counts": {
            "typed_relations": len(result.typed_relations),
            "inference_candidates": len(result.inference_candidates),
        },
        "_result": result,
    }


def bench_size(target: Target, n_instances: int, args: Options, dbt_vars: dict) -> dict:
    row: dict = {"instances": n_instances}
    with scratch_database(target, f"sherliic_bench_{n_instances}", keep=args.keep) as bench:
        config = GeneratorConfig(
            n_instances=n_instances,
            n_relations=args.relations,
            seed=args.seed,
            relation_zipf=args.relation_zipf,
            entity_zipf=args.entity_zipf,
            global_share=args.global_share,
        )
        summary = generate(bench, config, progress=True)
        row["graph"] = summary.as_dict()
        print(
            f"[{n_instances:,}] graph loaded in {summary.seconds:.0f}s; Σn² = {summary.hub_tail_sum_n2:,}",
            flush=True,
        )
        with tempfile.TemporaryDirectory(prefix="bench_dbt_") as tmp:
            # one dbt target folder for every build of this size, as a user's builds share theirs: the
            # first parses the project (~4 s), the others reuse its parse
            dbt_target = Path(tmp) / "dbt_target"
            references = ReferenceRuns(bench, dbt_vars, Path(tmp), n_instances)
            with_reference = n_instances <= args.reference_max
            row["sql"] = repeated_sql_build(
                bench, dbt_vars, dbt_target, args, after_build=references.run if with_reference else None
            )
            print(
                f"[{n_instances:,}] dbt run {row['sql']['wall_s']:.0f}s "
                f"({row['sql']['counts']['typed_relations']:,} typed relations, "
                f"{row['sql']['counts']['inference_candidates']:,} InfCands)",
                flush=True,
            )
            if references.runs:
                row["reference"] = references.row()
            if references.error:  # e.g. out of memory: keep the SQL numbers
                row["reference_error"] = references.error
            if n_instances == args.incremental_at:  # last: it adds instances to the bench database
                row["incremental"] = bench_incremental.bench_incremental(
                    bench, config, args.incremental_share, dbt_vars, dbt_target, args.repeat
                )
                print(
                    f"[{n_instances:,}] " + bench_incremental.markdown(row["incremental"]), end="", flush=True
                )
    return row


def repeated_sql_build(
    target: Target,
    dbt_vars: dict,
    dbt_target: Path,
    args: Options,
    after_build: Callable[[dict], None] | None = None,
) -> dict:
    """The build of the marts, args.repeat times on the same graph: the first from scratch, the others with
    --full-refresh (one run's time varies by ±15 % on a shared machine). The run with the median time is
    reported, with every run's time and CPU; EXPLAIN (after the timed builds) follows the last run. All
    runs use dbt's target folder `dbt_target`. `after_build(run)` follows each of the last
    args.reference_repeat builds (the reference's runs, paired with them)."""
    runs = []
    for number in range(1, args.repeat + 1):
        explain = args.explain and number == args.repeat
        runs.append(run_sql_build(target, dbt_vars, dbt_target, explain=explain, full_refresh=number > 1))
        if after_build is not None and number > args.repeat - args.reference_repeat:
            after_build(runs[-1])
    reported = median_run(runs, "wall_s")
    if len(runs) == 1:
        return reported
    # EXPLAIN ran after the last run: the plans of the same models on the same graph
    plans = {
        name: {key: figures[key] for key in ("plan", "temp_bytes") if key in figures}
        for name, figures in runs[-1]["models"].items()
    }
    models = {name: {**figures, **plans.get(name, {})} for name, figures in reported["models"].items()}
    runs_figures = [{"wall_s": run["wall_s"], "backend_cpu_s": run["backend_cpu_s"]} for run in runs]
    return {**reported, "models": models, "runs": runs_figures}


def paired_speedup(reference_walls: list[float], sql_walls: list[float]) -> float:
    """The median of reference / SQL over runs made back to back: within a pair the machine is the same
    one, between pairs its speed may differ by a third (docs/performance.md)."""
    return statistics.median([ref / sql for ref, sql in zip(reference_walls, sql_walls, strict=True)])


class ReferenceRuns:
    """The Python reference run right after SQL builds, each compared with the marts that build made."""

    def __init__(self, target: Target, dbt_vars: dict, tmp: Path, n_instances: int) -> None:
        self.target, self.dbt_vars, self.tmp, self.n_instances = target, dbt_vars, tmp, n_instances
        self.runs: list[dict] = []
        self.error: str | None = None

    def run(self, sql_run: dict) -> None:
        if self.error:  # e.g. out of memory once: the next run would be no different
            return
        vacuum_s = vacuum_database(self.target)  # as before every timed build
        try:
            ref = run_reference(self.target, self.dbt_vars, self.tmp / "ref.pkl")
        except RuntimeError as exc:
            self.error = repr(exc)
            return
        result = ref.pop("_result")
        problems = compare_with_marts(result, self.target)
        ref.update(vacuum_before_s=vacuum_s, equal_to_sql=not problems, differences=problems[:20])
        ref["sql_wall_s"] = sql_run["wall_s"]
        self.runs.append(ref)
        print(
            f"[{self.n_instances:,}] reference {ref['wall_s']:.0f}s after a {sql_run['wall_s']:.0f}s build, "
            f"equal: {ref['equal_to_sql']}",
            flush=True,
        )

    def row(self) -> dict:
        """The run with the median time, every run paired with its build, the speed-up of the pairs."""
        reported = median_run(self.runs, "wall_s")
        reference_s = [r["wall_s"] for r in self.runs]
        sql_s = [r["sql_wall_s"] for r in self.runs]
        pairs = [{"reference_s": ref, "sql_s": sql} for ref, sql in zip(reference_s, sql_s, strict=True)]
        speedup = paired_speedup(reference_s, sql_s)
        return {
            **reported,
            "equal_to_sql": all(r["equal_to_sql"] for r in self.runs),
            "differences": [d for r in self.runs for d in r["differences"]][:20],
            "pairs": pairs,
            "speedup_sql_vs_reference": round(speedup, 2),
        }


def growth(rows: list[dict], getter) -> list[dict]:
    """Local exponent b of time ~ size^b between consecutive sizes."""
    out = []
    for a, b in zip(rows, rows[1:], strict=False):
        ta, tb = getter(a), getter(b)
        if ta and tb:
            out.append(
                {
                    "from": a["instances"],
                    "to": b["instances"],
                    "time_ratio": round(tb / ta, 2),
                    "exponent": round(math.log(tb / ta) / math.log(b["instances"] / a["instances"]), 2),
                }
            )
    return out


def markdown(report: dict) -> str:
    lines = [
        "# Candidate build benchmark",
        "",
        f"Machine: {report['machine']['cpus']} CPUs, {gib(report['machine']['memory_bytes'])} RAM. "
        f"dbt vars: `{json.dumps(report['dbt_vars'])}`. Relations: {report['relations']:,}, seed "
        f"{report['seed']}.",
        "",
        "| instances | Σn² (hub tail) | typed rels | InfCands | dbt run | peak PG RSS / PSS "
        "| temp spilled | Python ref | ref peak RSS | speed-up | SQL = ref |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:--:|",
    ]
    for r in report["sizes"]:
        sql, ref = r["sql"], r.get("reference")
        lines.append(
            f"| {r['instances']:,} | {r['graph']['hub_tail_sum_n2']:,} "
            f"| {sql['counts']['typed_relations']:,} "
            f"| {sql['counts']['inference_candidates']:,} | {sql['wall_s']:.1f} s "
            f"| {gib(sql['peak_backend_rss_bytes'])} / {gib(sql['peak_backend_pss_bytes'])} "
            f"| {gib(sql['temp_bytes_spilled'])} "
            + (
                f"| {ref['wall_s']:.1f} s | {gib(ref['peak_rss_bytes'])} "
                f"| {ref['speedup_sql_vs_reference']}× "
                f"| {'yes' if ref['equal_to_sql'] else 'NO'} |"
                if ref
                else "| – | – | – | – |"
            )
        )
    repeated = [r for r in report["sizes"] if "runs" in r["sql"]]
    if repeated:
        lines += ["", "Repeated builds (the median run is shown above):", ""]
        for r in repeated:
            runs = r["sql"]["runs"]
            times = ", ".join(f"{run['wall_s']:.1f} s (CPU {run['backend_cpu_s']:.0f} s)" for run in runs)
            lines.append(f"- {r['instances']:,}: {times}")
    paired = [r for r in report["sizes"] if "reference" in r]
    if paired:
        lines += ["", "Reference runs, each right after a build (the speed-up is the median ratio):", ""]
        for r in paired:
            pairs = r["reference"]["pairs"]
            ratios = ", ".join(
                f"{p['reference_s']:.1f} / {p['sql_s']:.1f} s = {p['reference_s'] / p['sql_s']:.2f}×"
                for p in pairs
            )
            lines.append(f"- {r['instances']:,}: {ratios}")
    lines += ["", "## Time per model (seconds)", ""]
    models = sorted(
        {m for r in report["sizes"] for m in r["sql"]["models_s"]},
        key=lambda m: -report["sizes"][-1]["sql"]["models_s"].get(m, 0),
    )
    lines.append("| model | " + " | ".join(f"{r['instances']:,}" for r in report["sizes"]) + " |")
    lines.append("|---|" + "---:|" * len(report["sizes"]))
    for m in models:
        cells = " | ".join(f"{r['sql']['models_s'].get(m, 0):.1f}" for r in report["sizes"])
        lines.append(f"| {m} | {cells} |")
    lines += ["", "## Growth (time ~ size^b)", ""]
    for g in report["growth_sql"]:
        lines.append(f"- SQL {g['from']:,} → {g['to']:,}: ×{g['time_ratio']} (b = {g['exponent']})")
    for g in report["growth_reference"]:
        lines.append(f"- Python {g['from']:,} → {g['to']:,}: ×{g['time_ratio']} (b = {g['exponent']})")
    for f in report["failed_sizes"]:
        lines.append(f"- FAILED at {f['instances']:,} instances: {f['error']}")
    incremental = [r for r in report["sizes"] if "incremental" in r]
    if incremental:
        lines += ["", "## Incremental build", ""]
        lines += [
            f"- {r['instances']:,}: " + bench_incremental.markdown(r["incremental"]).rstrip()
            for r in incremental
        ]
    lines += ["", "## Goals", ""]
    for k, v in report["goals"].items():
        lines.append(f"- {k}: {v}")
    diffs = [d for r in report["sizes"] for d in (r.get("reference") or {}).get("differences", [])]
    if diffs:
        lines += ["", "## Differences SQL vs reference (first)", ""] + [f"- {d}" for d in diffs[:20]]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Options:
    """The command's options, as bench_size and write_report read them."""

    sizes: list[int]
    relations: int
    seed: int
    relation_zipf: float
    entity_zipf: float
    global_share: float
    reference_max: int
    incremental_at: int
    incremental_share: float
    repeat: int
    reference_repeat: int
    explain: bool
    keep: bool
    out: Path


@click.command(context_settings=CONTEXT, help=__doc__.split("\n")[0])
@version_option
@click.option(
    "--sizes",
    default="1000000,5000000,20000000",
    show_default=True,
    callback=parse_sizes,
    help="Comma-separated numbers of relation instances.",
)
@shape_options
@click.option(
    "--reference-max",
    type=int,
    default=20_000_000,
    show_default=True,
    help="Run the Python reference up to this many instances (0: never).",
)
@click.option(
    "--incremental-at",
    type=int,
    default=5_000_000,
    show_default=True,
    help="The size that gets the incremental row (0: none).",
)
@click.option(
    "--incremental-share",
    type=float,
    default=0.01,
    show_default=True,
    help="Instances added for the incremental row, as a share of the size.",
)
@repeat_option("each size's build (then with --full-refresh) and the incremental pair")
@click.option(
    "--reference-repeat",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Run the Python reference right after each of the last N builds (at most --repeat); the "
    "speed-up is the median of the pairs' ratios.",
)
@click.option(
    "--explain/--no-explain",
    default=True,
    show_default=True,
    help="EXPLAIN ANALYZE every model after the build (temp bytes, dominant plan node).",
)
@click.option(
    "--vars",
    "dbt_vars",
    default="{}",
    callback=json_object,
    help="dbt vars as JSON (default: the paper's thresholds).",
)
@click.option("--keep", is_flag=True, help="Keep the bench databases.")
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    default=lambda: out_folder() / "bench",
    show_default="out/bench",
)
@target_options()
def cli(target: Target, dbt_vars: dict, **options) -> int:
    # the bench databases are made on the Target's server (DATABASE_URL's, else the embedded one)
    args = Options(**options)
    if args.reference_repeat > args.repeat:
        raise click.BadParameter(
            f"{args.reference_repeat} reference runs need as many builds: --repeat is {args.repeat}",
            param_hint="--reference-repeat",
        )
    rows, failed = [], []
    for n in args.sizes:
        try:
            rows.append(bench_size(target, n, args, dbt_vars))
        except Exception as exc:  # keep the sizes measured so far; report the failure
            print(f"[{n:,}] FAILED: {exc}", flush=True)
            failed.append({"instances": n, "error": repr(exc)})
        if rows:  # write after every size, so a long run that is stopped keeps what it measured
            write_report(rows, failed, args, dbt_vars, final=n == args.sizes[-1])
    if not rows:
        print_error("no size completed: " + json.dumps(failed))
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="python -m benchmarks.bench_candidates")


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def goals(rows: list[dict]) -> dict[str, str]:
    """The targets (docs/performance.md) against the sizes this run measured: the speed-up at 5M, time,
    memory and speed-up at 20M, growth from 5M to 20M, equality with the reference, the incremental row."""
    by_size = {r["instances"]: r for r in rows}
    found: dict[str, str] = {}
    five, twenty = by_size.get(5_000_000), by_size.get(20_000_000)
    if five and "reference" in five:
        speedup = five["reference"]["speedup_sql_vs_reference"]
        found["5M: SQL ≥ 3.5× the reference"] = f"{speedup}× → {met(speedup >= 3.5)}"
    if twenty:
        sql = twenty["sql"]
        found["20M: dbt run ≤ 9 min"] = f"{sql['wall_s'] / 60:.1f} min → {met(sql['wall_s'] <= 540)}"
        found["20M: peak Postgres RSS ≤ 4 GiB"] = (
            f"{gib(sql['peak_backend_rss_bytes'])} (PSS {gib(sql['peak_backend_pss_bytes'])}) → "
            f"{met(sql['peak_backend_rss_bytes'] <= 4 * 2**30)}"
        )
        if "reference" in twenty:
            speedup = twenty["reference"]["speedup_sql_vs_reference"]
            found["20M: SQL ≥ 6× the reference"] = f"{speedup}× → {met(speedup >= 6)}"
    if five and twenty:
        exponent = math.log(twenty["sql"]["wall_s"] / five["sql"]["wall_s"]) / math.log(4)
        found["growth 5M → 20M ≤ size^1.15"] = f"size^{exponent:.2f} → {met(exponent <= 1.15)}"
    with_reference = [r for r in rows if "reference" in r]
    if with_reference:
        found["SQL == reference"] = ", ".join(
            f"{r['instances']:,}: {'equal' if r['reference']['equal_to_sql'] else 'DIFFERENT'}"
            for r in with_reference
        )
    incremental = [r for r in rows if "incremental" in r]
    if incremental:
        inc = incremental[-1]["incremental"]
        ok = inc["equal"] and inc["plan"]["is_incremental"] and inc["time_ratio"] <= 0.25
        found["incremental build ≤ 25 % of a full build, marts equal"] = (
            f"{inc['time_ratio']:.0%} of the time ({inc['cpu_ratio']:.0%} of the CPU) after adding "
            f"{inc['share']:.0%} at {incremental[-1]['instances']:,}, marts "
            f"{'equal' if inc['equal'] else 'DIFFERENT'} → {met(ok)}"
        )
    return found


def write_report(rows: list[dict], failed: list[dict], args: Options, dbt_vars: dict, final: bool) -> None:
    report = {
        "machine": {"cpus": os.cpu_count(), "memory_bytes": psutil.virtual_memory().total},
        "relations": args.relations,
        "seed": args.seed,
        "dbt_vars": dbt_vars,
        "generator": {
            "relation_zipf": args.relation_zipf,
            "entity_zipf": args.entity_zipf,
            "global_share": args.global_share,
        },
        "sizes": rows,
        "failed_sizes": failed,
        "growth_sql": growth(rows, lambda r: r["sql"]["wall_s"]),
        "growth_reference": growth([r for r in rows if "reference" in r], lambda r: r["reference"]["wall_s"]),
        "goals": goals(rows),
    }
    md = markdown(report)
    reports.write_report(args.out, "candidates", report, md)
    if final:
        print(json.dumps(report, indent=2, default=str))
        print(md)


if __name__ == "__main__":
    sys.exit(main())
