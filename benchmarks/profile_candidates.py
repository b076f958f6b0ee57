"""Profile of the candidate build: per dbt model its time, rows, peak memory, temp bytes and the plan's
dominant node (`EXPLAIN (ANALYZE, BUFFERS)`), with the machine's load average beside every timing.

How each figure is taken:
- before the build the database is vacuumed (not timed; its seconds are reported), so that the build
  does not share the machine with autovacuum working through the previous step's writes;
- time and rows: dbt's run_results.json (execution time, rows written);
- memory and CPU: every 0.5 s the Postgres backends of the bench database are sampled (psutil RSS, PSS
  and CPU time); a backend's memory and the CPU time it used since the last sample are charged to the
  model its query is building (the relation named in the statement; a parallel worker counts for its
  leader). A model's peak memory is the largest sum seen; its CPU seconds hardly depend on what else
  runs on the machine, unlike its time;
- temp bytes and the dominant node: after the build, each table model's compiled SELECT is run once more
  under `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` on the published tables, with the model's planner
  settings (the pre-hook `heavy_model_settings()`, rendered by dbt). Temp bytes are the plan's temp
  blocks written; the dominant node is the plan node with the largest time of its own (its children's
  time taken off), with its share of the plan's time.

`python -m benchmarks.profile_candidates --sizes 1000000` writes out/bench/profile_candidates.json and
.md. :func:`profile_dbt_run` is the same measurement for other benchmarks (bench_candidates).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import click
import psutil

from benchmarks.reports import gib
from benchmarks.synthetic_teg import GeneratorConfig, generate, shape_options
from builds.runner import dbt_output, run_dbt
from warehouse.command_line import CONTEXT, OUTPUT_FOLDER, json_object, run, target_options, version_option
from warehouse.scratch import scratch_database
from warehouse.settings import out_folder
from warehouse.target import Target

# the TEG marts (and so every TEG model upstream of them): what the candidate build builds
MARTS_SELECTOR = [
    "+typed_relations",
    "+inference_candidates",
    "+teg_edges",
    "+untyped_edges",
    "+entities",
    "+relations",
]
SAMPLE_SECONDS = 0.5
# the relation a dbt statement writes: create/alter/analyze/insert/delete ... "db"."schema"."model"
STATEMENT_RELATION = re.compile(
    r"^\s*(?:/\*.*?\*/\s*)?(?:create|alter|analyze|insert|delete|drop|comment|update|merge)\b.*?"
    r'"[^"]+"\."(?P<schema>[^"]+)"\."(?P<name>[^"]+?)(?:__dbt_tmp|__dbt_backup|__delta)?"',
    re.IGNORECASE | re.DOTALL,
)


def load_average() -> float:
    """The 1-minute load average (timings taken on a shared machine are noted with it)."""
    return round(os.getloadavg()[0], 2)


@dataclass
class ModelMemory:
    """Peak memory per model and of the whole build, sampled from the database's backends."""

    peak_rss: dict[str, int] = field(default_factory=dict)
    peak_pss: dict[str, int] = field(default_factory=dict)
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    total_cpu_seconds: float = 0.0
    total_rss: int = 0
    total_pss: int = 0
    max_load: float = 0.0
    samples: int = 0


class BackendSampler:
    """Samples the backends serving one database in a thread: memory per model, load average."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.memory = ModelMemory()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._model_of_pid: dict[int, str] = {}
        self._cpu_of_pid: dict[int, float] = {}

    def _activity(self, conn) -> list[tuple[int, int, str]]:
        return conn.execute(
            "select pid, coalesce(leader_pid, pid), coalesce(query, '') from pg_stat_activity "
            "where datname = current_database() and pid <> pg_backend_pid()"
        ).fetchall()

    def _sample(self, conn) -> None:
        rss_by_model: dict[str, int] = {}
        pss_by_model: dict[str, int] = {}
        total_rss = total_pss = 0
        activity = self._activity(conn)
        queries = {pid: query for pid, _, query in activity}
        for pid, leader, _ in activity:
            match = STATEMENT_RELATION.match(queries.get(leader, ""))
            if match:
                self._model_of_pid[leader] = match["name"]
            model = self._model_of_pid.get(leader)
            try:
                process = psutil.Process(pid)
                info = process.memory_full_info()
                times = process.cpu_times()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            cpu = times.user + times.system
            used = cpu - self._cpu_of_pid.get(pid, 0.0)
            self._cpu_of_pid[pid] = cpu
            total_rss += info.rss
            total_pss += info.pss
            self.memory.total_cpu_seconds += used
            if model:
                rss_by_model[model] = rss_by_model.get(model, 0) + info.rss
                pss_by_model[model] = pss_by_model.get(model, 0) + info.pss
                self.memory.cpu_seconds[model] = self.memory.cpu_seconds.get(model, 0.0) + used
        memory = self.memory
        for model, rss in rss_by_model.items():
            memory.peak_rss[model] = max(memory.peak_rss.get(model, 0), rss)
            memory.peak_pss[model] = max(memory.peak_pss.get(model, 0), pss_by_model[model])
        memory.total_rss = max(memory.total_rss, total_rss)
        memory.total_pss = max(memory.total_pss, total_pss)
        memory.max_load = max(memory.max_load, load_average())
        memory.samples += 1

    def _run(self) -> None:
        with self.target.connect(autocommit=True) as conn:
            while not self._stop.is_set():
                self._sample(conn)
                self._stop.wait(SAMPLE_SECONDS)

    def __enter__(self) -> BackendSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def temp_bytes(target: Target) -> int:
    """Temp-file bytes the database has written so far (pg_stat_database)."""
    with target.connect(autocommit=True) as conn:
        row = conn.execute("select temp_bytes from pg_stat_database where datname = current_database()")
        return int(row.fetchone()[0])


# -- plans -------------------------------------------------------------------------------------------
def _node_time(node: dict) -> float:
    """A node's total time in ms, over all its loops (parallel workers included)."""
    return float(node.get("Actual Total Time", 0.0)) * float(node.get("Actual Loops", 1) or 1)


def plan_nodes(plan: dict) -> list[dict]:
    """Every node of an EXPLAIN (ANALYZE, FORMAT JSON) plan with the time spent in the node itself.

    A CTE's plan is charged to the first CTE Scan that reads it, so that scan's own time is its total
    minus the CTE's; InitPlan/SubPlan children are not subtracted from the node that owns them."""
    cte_time: dict[str, float] = {}

    def collect_ctes(node: dict) -> None:
        name = node.get("Subplan Name", "")
        if name.startswith("CTE "):
            cte_time[name[4:]] = _node_time(node)
        for child in node.get("Plans", []):
            collect_ctes(child)

    collect_ctes(plan)
    charged: set[str] = set()
    out: list[dict] = []

    def walk(node: dict) -> None:
        children = node.get("Plans", [])
        own = _node_time(node) - sum(
            _node_time(c) for c in children if c.get("Parent Relationship") not in ("InitPlan", "SubPlan")
        )
        cte = node.get("CTE Name")
        if node["Node Type"] == "CTE Scan" and cte in cte_time and cte not in charged:
            own -= cte_time[cte]
            charged.add(cte)
        out.append(
            {
                "node": node["Node Type"],
                "on": node.get("Relation Name") or cte or node.get("Subplan Name") or "",
                "own_ms": max(own, 0.0),
                "rows": round(float(node.get("Actual Rows", 0)) * float(node.get("Actual Loops", 1) or 1)),
                "estimated_rows": node.get("Plan Rows"),
                "workers": node.get("Workers Launched"),
            }
        )
        for child in children:
            walk(child)

    walk(plan)
    return out


def summarize_plan(explained: dict) -> dict:
    """Execution time, temp bytes written and the dominant node of one EXPLAIN result."""
    plan = explained["Plan"]
    nodes = plan_nodes(plan)
    total_own = sum(n["own_ms"] for n in nodes) or 1.0
    top = max(nodes, key=lambda n: n["own_ms"])
    return {
        "execution_s": round(explained["Execution Time"] / 1000, 3),
        "temp_bytes": int(plan.get("Temp Written Blocks", 0)) * 8192,
        "parallel_workers": max((n["workers"] or 0 for n in nodes), default=0),
        "dominant_node": {
            "node": top["node"],
            "on": top["on"],
            "own_s": round(top["own_ms"] / 1000, 3),
            "share": round(top["own_ms"] / total_own, 3),
            "rows": top["rows"],
            "estimated_rows": top["estimated_rows"],
        },
    }


def rendered_hook(target: Target, macro_call: str, dbt_vars: dict, target_dir: Path) -> str:
    """The SQL a hook macro renders to (dbt compile --inline), e.g. heavy_model_settings()."""
    args = ["compile", "--quiet", "--inline", "{{ " + macro_call + " }}"]
    return dbt_output(target, [*args, "--target-path", str(target_dir / "inline")], dbt_vars).strip()


def explain_models(target: Target, target_dir: Path, models: list[str], dbt_vars: dict) -> dict[str, dict]:
    """EXPLAIN (ANALYZE, BUFFERS) of each model's compiled SELECT, on the published tables."""
    manifest = json.loads((target_dir / "manifest.json").read_text())
    nodes = {n["name"]: n for n in manifest["nodes"].values() if n["resource_type"] == "model"}
    settings = rendered_hook(target, "heavy_model_settings()", dbt_vars, target_dir)
    plans: dict[str, dict] = {}
    with target.connect() as conn:
        for name in models:
            node = nodes.get(name)
            if node is None or node["config"]["materialized"] == "view":
                continue
            compiled = target_dir / "compiled" / node["package_name"] / node["original_file_path"]
            if not compiled.exists():
                continue
            sql = re.sub(r'"([A-Za-z0-9_]+)__next"', r'"\1"', compiled.read_text())
            hooks = " ".join(hook["sql"] for hook in node["config"].get("pre-hook", []))
            try:
                if "heavy_model_settings" in hooks:
                    for statement in settings.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                explained = conn.execute("explain (analyze, buffers, format json) " + sql).fetchone()[0][0]
                plans[name] = summarize_plan(explained)
            finally:
                conn.rollback()
    return plans


# -- one profiled dbt run ----------------------------------------------------------------------------
def repeat_option(what: str):
    """The --repeat option of the benchmarks that time a step several times (`what`: the step)."""
    return click.option(
        "--repeat",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help=f"Run {what} this many times and report the median run (of an even number, the lower of the "
        "middle two): one run's time varies by ±15 % on a shared machine.",
    )


def median_run(runs: list[dict], key: str) -> dict:
    """The run whose `key` is the median (of an even number of runs, the lower of the middle two)."""
    return sorted(runs, key=lambda run: run[key])[(len(runs) - 1) // 2]


def vacuum_database(target: Target) -> float:
    """VACUUM the Target's database before a timed step, so that the step does not share the machine with
    autovacuum catching up on the previous step's writes (the freshly loaded graph, the last build's
    tables). Returns its seconds, which are reported beside the step's time, not in it."""
    start = time.perf_counter()
    with target.connect(autocommit=True) as conn:
        conn.execute("vacuum")
    return round(time.perf_counter() - start, 2)


def profile_dbt_run(
    target: Target,
    dbt_args: list[str],
    dbt_vars: dict,
    target_dir: Path,
    *,
    explain: bool = False,
) -> dict:
    """Run `dbt <dbt_args>` (its target path: target_dir) and return the build's figures: wall time,
    load average, peak memory, temp bytes, and per model time, rows, peak memory (and with `explain`
    the plan summary of every table model)."""
    vacuum_s = vacuum_database(target)
    temp_before = temp_bytes(target)
    load_start = load_average()
    start = time.perf_counter()
    with BackendSampler(target) as sampler:
        run_dbt(target, [*dbt_args, "--target-path", str(target_dir)], dbt_vars)
    wall = time.perf_counter() - start
    memory = sampler.memory
    results = json.loads((target_dir / "run_results.json").read_text())
    models: dict[str, dict] = {}
    for result in results["results"]:
        if not result["unique_id"].startswith("model."):
            continue
        name = result["unique_id"].split(".")[-1]
        rows = (result.get("adapter_response") or {}).get("rows_affected")
        models[name] = {
            "seconds": round(result["execution_time"], 3),
            "rows": rows if rows is not None and rows >= 0 else None,
            "peak_rss_bytes": memory.peak_rss.get(name, 0),
            "peak_pss_bytes": memory.peak_pss.get(name, 0),
            "cpu_s": round(memory.cpu_seconds.get(name, 0.0), 2),
        }
    if explain:
        for name, plan in explain_models(target, target_dir, list(models), dbt_vars).items():
            models[name]["plan"] = plan
            models[name]["temp_bytes"] = plan["temp_bytes"]
    return {
        "wall_s": round(wall, 2),
        "vacuum_before_s": vacuum_s,
        "load_average": {"start": load_start, "end": load_average(), "max_1min": memory.max_load},
        "peak_backend_rss_bytes": memory.total_rss,
        "peak_backend_pss_bytes": memory.total_pss,
        "backend_cpu_s": round(memory.total_cpu_seconds, 1),
        "memory_samples": memory.samples,
        "temp_bytes_spilled": temp_bytes(target) - temp_before,
        "models": dict(sorted(models.items(), key=lambda kv: -kv[1]["seconds"])),
    }


# -- command -----------------------------------------------------------------------------------------
def mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def markdown(report: dict) -> str:
    lines = ["# Candidate build profile", ""]
    for size in report["sizes"]:
        build = size["build"]
        load = build["load_average"]
        lines += [
            f"## {size['instances']:,} instances",
            "",
            f"`dbt run` {build['wall_s']:.1f} s (load average {load['start']} at the start, "
            f"{load['end']} at the end, max {load['max_1min']}); peak Postgres RSS "
            f"{gib(build['peak_backend_rss_bytes'])} (PSS {gib(build['peak_backend_pss_bytes'])}); "
            f"temp spilled {mib(build['temp_bytes_spilled'])}; Postgres CPU {build['backend_cpu_s']:.0f} s.",
            "",
            "| model | s | CPU s | rows | peak RSS | temp | dominant node (share of plan time) |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for name, m in build["models"].items():
            plan = m.get("plan")
            dominant = (
                f"{plan['dominant_node']['node']} {plan['dominant_node']['on']} "
                f"({plan['dominant_node']['share']:.0%}, {plan['dominant_node']['rows']:,} rows)"
                if plan
                else "–"
            )
            rows = f"{m['rows']:,}" if m["rows"] is not None else "–"
            lines.append(
                f"| {name} | {m['seconds']:.2f} | {m['cpu_s']:.1f} | {rows} | {mib(m['peak_rss_bytes'])} "
                f"| {mib(m.get('temp_bytes', 0))} | {dominant} |"
            )
        lines.append("")
    return "\n".join(lines)


@dataclass(frozen=True)
class Options:
    sizes: list[int]
    relations: int
    seed: int
    relation_zipf: float
    entity_zipf: float
    global_share: float
    threads: int
    explain: bool
    out: Path


def parse_sizes(ctx: click.Context, param: click.Parameter, value: str) -> list[int]:
    """click callback of a --sizes option: comma-separated instance counts, ascending."""
    try:
        return sorted(int(s) for s in value.split(",") if s.strip())
    except ValueError:
        raise click.BadParameter(f"comma-separated integers, got {value!r}") from None


def profile_size(target: Target, n_instances: int, args: Options, dbt_vars: dict) -> dict:
    """A scratch database on the Target's server with a synthetic graph of n_instances, built once."""
    with scratch_database(target, f"sherliic_profile_{n_instances}") as bench:
        config = GeneratorConfig(
            n_instances=n_instances,
            n_relations=args.relations,
            seed=args.seed,
            relation_zipf=args.relation_zipf,
            entity_zipf=args.entity_zipf,
            global_share=args.global_share,
        )
        summary = generate(bench, config, progress=False)
        with tempfile.TemporaryDirectory(prefix="profile_dbt_") as tmp:
            build = profile_dbt_run(
                bench,
                ["run", "--select", *MARTS_SELECTOR, "--threads", str(args.threads)],
                dbt_vars,
                Path(tmp),
                explain=args.explain,
            )
    return {"instances": n_instances, "graph": summary.as_dict(), "build": build}


@click.command(context_settings=CONTEXT, help=__doc__.split("\n")[0])
@version_option
@click.option(
    "--sizes", default="1000000", show_default=True, callback=parse_sizes, help="Instances, comma-separated."
)
@shape_options
@click.option("--threads", type=int, default=2, show_default=True, help="dbt threads (the bench uses 2).")
@click.option("--explain/--no-explain", default=True, show_default=True, help="EXPLAIN ANALYZE every model.")
@click.option("--vars", "dbt_vars", default="{}", callback=json_object, help="dbt vars as JSON.")
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    default=lambda: out_folder() / "bench",
    show_default="out/bench",
)
@target_options()
def cli(target: Target, dbt_vars: dict, **options) -> int:
    # the scratch databases are made on the Target's server (DATABASE_URL's, else the embedded one)
    args = Options(**options)
    rows = []
    for n in args.sizes:
        rows.append(profile_size(target, n, args, dbt_vars))
        report = {
            "machine": {"cpus": os.cpu_count(), "memory_bytes": psutil.virtual_memory().total},
            "dbt_vars": dbt_vars,
            "threads": args.threads,
            "sizes": rows,
        }
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "profile_candidates.json").write_text(json.dumps(report, indent=2, default=str))
        (args.out / "profile_candidates.md").write_text(markdown(report))
    print(markdown(report))
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="python -m benchmarks.profile_candidates")


if __name__ == "__main__":
    sys.exit(main())
