"""Baseline benchmarks (`make bench-baselines`), written to out/bench/baselines.json and .md.

1. Scoring time of every registered baseline on all SherLIiC-dev items (the project's database; graph
   baselines need the marts, baselines whose resources are missing are listed as skipped).
2. WeedsPrec / invCL in SQL (baselines.distributional, one query over the marts) against the original
   approach — a dense count vector per relation of each item pair over the whole entity-pair space, numpy —
   on the same synthetic graph in a scratch database (warehouse.scratch; our real TEG is small). Both must
   agree to 1e-9; the goal is SQL ≥ 10× faster end to end (the Python side must first read the graph, as
   the original read teg.tsv).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import click
import numpy as np
import pandas as pd
from tqdm import tqdm

from baselines.distributional import compute_scores
from deppath.paths import canonical_path
from evaluation.catalog import ordered_names
from evaluation.context import command_context
from evaluation.datasets import items_frame, read_sherliic_tsv
from evaluation.registry import REGISTRY, ResourceMissing
from lm.plan import LmSettings
from warehouse.command_line import CONTEXT, OUTPUT_FOLDER, run, target_options, version_option
from warehouse.scratch import scratch_database
from warehouse.settings import out_folder, shared_data_dir
from warehouse.target import ENGINES, Target

# Synthetic graph: clusters of relations sharing a pool of entity pairs, so item pairs overlap.
GRAPH_SQL = """
create schema warehouse;
create table warehouse.relations as
select r as rel_id, 'nsubj^-___v' || r || '___dobj' as path
from generate_series(1, {n_relations}) as r;

create table warehouse.untyped_edges as
with picks as (
    select
        r.rel_id,
        (r.rel_id - 1) / {cluster_size} as cluster,
        abs(hashint8(r.rel_id::bigint * 1000 + j)) % {pool} as p,
        1 + abs(hashint8(r.rel_id::bigint * 7919 + j)) % 5 as n
    from warehouse.relations as r
    cross join generate_series(0, {edges_per_relation} - 1) as j
)
select
    rel_id,
    cluster * {pool} + p as arg1_entity_id,
    -- pair p = (p, pool-1-p) inside the cluster: its reversal is pair pool-1-p, so crossed items overlap too
    cluster * {pool} + ({pool} - 1 - p) as arg2_entity_id,
    sum(n)::bigint as n_instances
from picks
group by 1, 2, 3;
analyze warehouse.relations;
analyze warehouse.untyped_edges;
"""


def build_synthetic_graph(
    target: Target, n_relations: int, cluster_size: int, pool: int, edges_per_relation: int
) -> dict:
    params = {
        "n_relations": n_relations,
        "cluster_size": cluster_size,
        "pool": pool,
        "edges_per_relation": edges_per_relation,
    }
    started = time.perf_counter()
    with target.connect() as conn:
        # integers only, formatted in: a multi-statement script cannot take bound parameters
        conn.execute(GRAPH_SQL.format(**{k: int(v) for k, v in params.items()}))
        n_edges = conn.execute("select count(*) from warehouse.untyped_edges").fetchone()[0]
        n_pairs = conn.execute(
            "select count(*) from (select distinct arg1_entity_id, arg2_entity_id"
            " from warehouse.untyped_edges) as p"
        ).fetchone()[0]
    seconds = time.perf_counter() - started
    return {**params, "n_edges": n_edges, "n_entity_pairs": n_pairs, "build_seconds": seconds}


def synthetic_items(n_items: int, n_relations: int, cluster_size: int, seed: int = 0) -> pd.DataFrame:
    """Relation pairs of one cluster in SherLIiC orientation; a third crossed (hypothesis object-first)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_items):
        cluster = rng.integers(0, n_relations // cluster_size)
        prem, hypo = cluster * cluster_size + 1 + rng.choice(cluster_size, 2, replace=False)
        crossed = rng.random() < 1 / 3
        rows.append(
            {
                "premise_path": f"nsubj^-___v{prem}___dobj",
                "hypothesis_path": f"dobj^-___v{hypo}___nsubj" if crossed else f"nsubj^-___v{hypo}___dobj",
            }
        )
    return pd.DataFrame(rows)


def dense_reference(target: Target, items: pd.DataFrame) -> tuple[pd.DataFrame, float, float]:
    """The original approach: read the whole graph, then per item a dense count vector per relation over the
    entity-pair space; returns (scores, load seconds, scoring seconds)."""
    started = time.perf_counter()
    with target.connect() as conn:
        rel_of_path = dict(conn.execute("select path, rel_id from warehouse.relations").fetchall())
        cur = conn.execute(
            "select rel_id, arg1_entity_id, arg2_entity_id, n_instances from warehouse.untyped_edges"
        )
        edges = np.array(cur.fetchall(), dtype=np.int64)
    rel, a1, a2, count = edges.T
    big = np.int64(1) << 31
    keys, reversed_keys = a1 * big + a2, a2 * big + a1
    universe = np.unique(np.concatenate([keys, reversed_keys]))  # pairs in both orientations
    index, reversed_index = np.searchsorted(universe, keys), np.searchsorted(universe, reversed_keys)
    order = np.argsort(rel, kind="stable")
    starts = np.searchsorted(rel[order], np.arange(rel.max() + 2))
    load_seconds = time.perf_counter() - started

    started = time.perf_counter()
    out = []
    for prem_path, hypo_path in zip(items["premise_path"], items["hypothesis_path"], strict=True):
        (prem, prem_rev), (hypo, hypo_rev) = canonical_path(prem_path), canonical_path(hypo_path)
        p_id, h_id = rel_of_path[prem], rel_of_path[hypo]
        p_edges = order[starts[p_id] : starts[p_id + 1]]
        h_edges = order[starts[h_id] : starts[h_id + 1]]
        x = np.zeros(len(universe))
        y = np.zeros(len(universe))
        x[index[p_edges]] = count[p_edges]
        y[(reversed_index if prem_rev != hypo_rev else index)[h_edges]] = count[h_edges]
        cl_xy = np.minimum(x, y).sum() / x.sum()
        cl_yx = np.minimum(x, y).sum() / y.sum()
        out.append(
            {
                "weeds_prec": (x * (y > 0)).sum() / x.sum(),
                "cl_xy": cl_xy,
                "cl_yx": cl_yx,
                "inv_cl": np.sqrt(max(cl_xy * (1 - cl_yx), 0.0)),
            }
        )
    return pd.DataFrame(out), load_seconds, time.perf_counter() - started


def bench_sql_vs_dense(
    target: Target, n_relations: int, cluster_size: int, pool: int, edges_per_relation: int, n_items: int
) -> dict:
    """Both approaches on a synthetic graph in a scratch database of the Target's Postgres server."""
    name = f"sherliic_bench_baselines_{uuid.uuid4().hex[:8]}"
    with scratch_database(target, name) as bench:
        graph = build_synthetic_graph(bench, n_relations, cluster_size, pool, edges_per_relation)
        items = synthetic_items(n_items, n_relations, cluster_size)
        started = time.perf_counter()
        sql = compute_scores(items, bench, "untyped")
        sql_seconds = time.perf_counter() - started
        dense, load_seconds, dense_seconds = dense_reference(bench, items)
    diffs = {c: float(np.max(np.abs(sql[c].to_numpy() - dense[c].to_numpy()))) for c in dense.columns}
    assert all(d <= 1e-9 for d in diffs.values()), f"SQL and dense scores differ: {diffs}"
    python_total = load_seconds + dense_seconds
    return {
        "graph": graph,
        "n_items": n_items,
        "n_crossed": int(items["hypothesis_path"].str.endswith("nsubj").sum()),
        "sql_seconds": sql_seconds,
        "python_load_seconds": load_seconds,
        "python_score_seconds": dense_seconds,
        "python_total_seconds": python_total,
        "speedup_total": python_total / sql_seconds,
        "speedup_scoring_only": dense_seconds / sql_seconds,
        "max_abs_difference": diffs,
        "mean_weeds_prec": float(sql["weeds_prec"].mean()),
    }


def bench_all_baselines(target: Target) -> dict:
    """Seconds per registered baseline on all SherLIiC-dev items (items read from the shared TSV; the marts
    of the Target)."""
    shared = shared_data_dir()
    items = items_frame(read_sherliic_tsv(shared / "sherliic" / "dev.tsv"))
    rows, skipped = [], {}
    with command_context(target, shared_data=shared, lm=LmSettings.as_recorded()) as ctx:
        for name in tqdm(ordered_names(), desc="baselines", unit="baseline"):
            started = time.perf_counter()
            try:
                scores = REGISTRY[name].score(items, ctx)
            except ResourceMissing as exc:
                skipped[name] = str(exc)
                continue
            rows.append(
                {
                    "method": name,
                    "seconds": time.perf_counter() - started,
                    "n_items": len(items),
                    "n_covered": int(scores.notna().sum()),
                }
            )
    return {"n_items": len(items), "rows": rows, "skipped": skipped}


def write(result: dict, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "baselines.json", out_dir / "baselines.md"
    json_path.write_text(json.dumps(result, indent=2, default=float) + "\n", encoding="utf-8")
    lines = ["# Baseline benchmarks", ""]
    cmp_ = result.get("sql_vs_dense")
    if cmp_:
        g = cmp_["graph"]
        lines += [
            "## WeedsPrec / invCL: SQL over the marts vs dense numpy vectors (original approach)",
            "",
            f"Synthetic graph: {g['n_relations']:,} relations, {g['n_edges']:,} edges, "
            f"{g['n_entity_pairs']:,} entity pairs; {cmp_['n_items']} items ({cmp_['n_crossed']} crossed).",
            "",
            "| | seconds |",
            "|---|---:|",
            f"| SQL (all distributional scores, incl. upload of the items) | {cmp_['sql_seconds']:.2f} |",
            f"| Python: read the graph | {cmp_['python_load_seconds']:.2f} |",
            f"| Python: dense vectors, WeedsPrec + invCL | {cmp_['python_score_seconds']:.2f} |",
            f"| Python total | {cmp_['python_total_seconds']:.2f} |",
            "",
            f"Speed-up end to end: **{cmp_['speedup_total']:.1f}×** (scoring only: "
            f"{cmp_['speedup_scoring_only']:.1f}×). Max |SQL − dense|: "
            + ", ".join(f"{k} {v:.1e}" for k, v in cmp_["max_abs_difference"].items())
            + " (asserted ≤ 1e-9); "
            f"mean WeedsPrec {cmp_['mean_weeds_prec']:.3f}.",
            "",
        ]
    every = result.get("all_baselines")
    if every:
        lines += [
            "## Scoring all SherLIiC-dev items",
            "",
            f"{every['n_items']} items.",
            "",
            "| baseline | seconds | covered |",
            "|---|---:|---:|",
        ]
        lines += [f"| {r['method']} | {r['seconds']:.2f} | {r['n_covered']} |" for r in every["rows"]]
        if every["skipped"]:
            lines += ["", "Skipped:", ""] + [f"- {k}: {v}" for k, v in every["skipped"].items()]
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return json_path, md_path


@click.command(context_settings=CONTEXT, help=__doc__.splitlines()[0])
@version_option
@click.option("--relations", type=int, default=40_000, show_default=True)
@click.option("--cluster-size", type=int, default=10, show_default=True)
@click.option("--pool", type=int, default=500, show_default=True, help="Entity pairs per relation cluster.")
@click.option("--edges-per-relation", type=int, default=50, show_default=True)
@click.option("--items", type=int, default=996, show_default=True, help="Item pairs (SherLIiC-dev has 996).")
@click.option("--skip-all-baselines", is_flag=True, help="Only the SQL vs dense Python part.")
@target_options(engines=ENGINES)
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    default=lambda: out_folder() / "bench",
    show_default="out/bench",
)
def cli(
    target: Target,
    relations: int,
    cluster_size: int,
    pool: int,
    edges_per_relation: int,
    items: int,
    skip_all_baselines: bool,
    out: Path,
) -> None:
    result = {
        "sql_vs_dense": bench_sql_vs_dense(target, relations, cluster_size, pool, edges_per_relation, items)
    }
    if not skip_all_baselines:  # on the warehouse with the marts
        result["all_baselines"] = bench_all_baselines(target)
    json_path, md_path = write(result, out)
    print(md_path.read_text(encoding="utf-8"))
    print(f"wrote {json_path} and {md_path}")


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="python -m benchmarks.bench_baselines")


if __name__ == "__main__":
    raise SystemExit(main())
