"""`make lm` and `make bench-lm` (click, the style of warehouse/command_line.py).

python -m lm.cli run [--sherliic-test PATH] [--levy-holt-test FILE_OR_FOLDER] [--no-load]
    trains the missing runs (parallel workers, lm.jobs), scores every loaded benchmark with every
    `lm:` method and the learned combination (which then has the LM zero-shot features), adds the fold
    rows (tm_cv, or pd_cv with LM_FOLD_SCHEME=pd) of the `lm:` methods (lm.selection),
    replaces their rows in out/baselines.csv, rewrites out/baselines.md, writes PR curves to
    out/plots/lm/, stores results.baseline_scores, and writes the per-seed table out/lm/seeds.{csv,md}
    (mean ± sd over seeds).
python -m lm.cli train --datasets 'levy_holt/*' --fine-tuned [--seeds 1,2]
    only fills the run cache, for some datasets or seeds
python -m lm.cli bench [--model minilm] [--items 200]
    seconds per epoch with 1 and 2 torch threads and peak memory -> out/bench/lm_<model>.json
python -m lm.cli select --model minilm --patterns 'x, which means that y' --dataset sherliic
    judges one candidate on the selection folds -> out/lm/selection.{csv,md}, out/lm/selection_cost.png
python -m lm.cli select-report
    rewrites out/lm/selection.md and out/lm/selection_cost.png from out/lm/selection.csv

`run` and `train` read their plan and settings from the environment once (lm.plan.LmSettings);
`run` records the plan behind every row it wrote beside the run cache, for the commands that read it later.
"""

from __future__ import annotations

import fnmatch
import json
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

import click
import pandas as pd

from builds.records import BuildRef
from evaluation import catalog, report
from evaluation.catalog import COMBINATION
from evaluation.context import command_context
from evaluation.datasets import sherliic_splits
from evaluation.evaluate import (
    CSV_COLUMNS,
    evaluate_baseline,
    evaluate_many,
    store_results,
    with_build,
    with_build_columns,
)
from evaluation.options import EvaluationOptions, check_csv_build, prepare_evaluation, shared_data
from evaluation.registry import Baseline, Context, ResourceMissing, get
from lm.command_options import (
    MODEL,
    MODEL_HELP,
    comma_list,
    installed_models,
    load_average,
    loaded_items,
    out_option,
    seed_list,
    workers_option,
)
from lm.jobs import default_workers, fill_cache, planned_jobs
from lm.methods import (
    ALLOW_COMPUTE,
    ITEMS,
    ensemble_scores,
    fine_tuned_scores,
    keep_rows,
    mix_scores,
    register_methods,
)
from lm.models import require_stack
from lm.patterns import HYPOTHESIS_ONLY, render
from lm.plan import LmSettings, Plan, PlanRecord, base_recipe, lm_method_names, method_names
from lm.rank.cli import bench_rank_command, rank_command
from lm.runs import cached_runs
from lm.selection import cv_evaluation
from lm.selection_cli import select_command, select_report_command
from warehouse import command_line
from warehouse.command_line import target_options, version_option
from warehouse.errors import print_error
from warehouse.settings import shared_data_dir
from warehouse.target import ENGINES, Target

MIX = ("fine-tuned + zero-shot",)  # the seed table's marker of the mix method


def merge_by_method(new: pd.DataFrame, path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    """The file's rows with the (method, dataset) pairs of `new` replaced by `new`; others stay (e.g. another
    model's rows from an earlier `make lm` with another plan, or datasets this run did not load)."""
    if path.is_file():
        old = pd.read_csv(path)
        replaced = set(zip(new["method"], new["dataset"], strict=True))
        old = old[[k not in replaced for k in zip(old["method"], old["dataset"], strict=True)]]
        new = pd.concat([old, new], ignore_index=True)
    return new[columns] if columns else new


def seed_table(items: pd.DataFrame, ctx: Context, plan: Plan, models: list[str]) -> pd.DataFrame:
    """Per-seed rows of every fine-tuned method (same plans as the harness), for mean ± sd."""
    rows = []
    for model in models:
        names = method_names(model, plan.patterns)
        variants = [(names[p], (p,)) for p in plan.patterns] + [
            (names["hypothesis-only"], (HYPOTHESIS_ONLY,))
        ]
        for method, patterns in [*variants, (names["ensemble"], None), (names["mix"], MIX)]:
            for seed in plan.seeds:

                def score(
                    group: pd.DataFrame, c: Context, patterns=patterns, seed=seed, model=model
                ) -> pd.Series:
                    if patterns == MIX:
                        return mix_scores(group, model, c, plan, (seed,))
                    if patterns is None:
                        return ensemble_scores(group, model, c, plan, (seed,))
                    return fine_tuned_scores(group, model, patterns, c, plan, (seed,))

                bl = Baseline(f"{method} seed {seed}", score, True, "", on_top_of_lemma=False)
                ev = evaluate_baseline(bl, items, ctx)
                ev.extend(cv_evaluation([bl], items, ctx))
                ev = keep_rows(ev)
                rows += [{**r, "method": method, "seed": seed} for r in ev.rows]
    return pd.DataFrame(rows)


def seed_summary(per_seed: pd.DataFrame) -> pd.DataFrame:
    if per_seed.empty:
        return per_seed
    metrics = ["precision", "recall", "f1", "auc_pr50", "auc_norm", "roc_auc"]
    grouped = per_seed.groupby(["method", "dataset", "split"], sort=False)
    summary = grouped[metrics].agg(["mean", "std"])
    summary.columns = [f"{m}_{stat}" for m, stat in summary.columns]
    summary["n_seeds"] = grouped.size()
    return summary.reset_index()


def seeds_markdown(summary: pd.DataFrame, build: BuildRef) -> str:
    lines = [
        "# LM methods: mean ± sd over seeds",
        "",
        f"Build: {build.label} (`sherliic-dbt builds` shows its provenance).",
        "",
        "One row per fine-tuned method, benchmark and split; each seed's threshold is tuned like every "
        "harness row (SherLIiC lm_dev: on lm_split=train; Levy/Holt dev: on train), on out-of-fold scores; "
        "tm_cv / pd_cv: the labelled pool on the test-matched / predicate-disjoint folds, cross-fitted "
        "thresholds. In %.",
        "",
        "| method | dataset | split | seeds | P | R | F1 | AUC(p≥.5) | AUC norm |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]

    def pm(r, m: str, scale: float = 100.0, digits: int = 1) -> str:
        sd = r[f"{m}_std"]
        sd_text = "" if sd != sd else f" ± {scale * sd:.{digits}f}"
        return f"{scale * r[f'{m}_mean']:.{digits}f}{sd_text}"

    for _, r in summary.iterrows():
        lines.append(
            f"| {r['method']} | {r['dataset']} | {r['split']} | {r['n_seeds']} | {pm(r, 'precision')} "
            f"| {pm(r, 'recall')} | {pm(r, 'f1')} | {pm(r, 'auc_pr50', 1, 3)} | {pm(r, 'auc_norm', 1, 3)} |"
        )
    return "\n".join(lines) + "\n"


def selected_datasets(loaded: list[str], globs: tuple[str, ...]) -> list[str]:
    """The loaded datasets matching any of the globs (e.g. `levy_holt/*` = the six directional
    subsets, not `levy_holt` itself); a glob that matches nothing is a usage error."""
    for g in globs:
        if not any(fnmatch.fnmatchcase(d, g) for d in loaded):
            raise click.BadParameter(
                f"{g!r} matches no loaded dataset (loaded: {', '.join(sorted(loaded))})",
                param_hint="--datasets",
            )
    return sorted(d for d in set(loaded) if any(fnmatch.fnmatchcase(d, g) for g in globs))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@version_option
def cli() -> None:
    """LM inference methods (docs/lm.md): `make lm` (run), cache filling (train), `make bench-lm` (bench)."""
    catalog.load_all()


def runs_markdown(rows: list[dict]) -> str:
    """The cost of the cached trained runs: one line per run and the total training time."""
    lines = [
        "# LM runs in the cache: training time",
        "",
        "| model | pattern | training items | seed | epochs | threads | seconds |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    rows = sorted(rows, key=lambda r: (r["model"], str(r["training"]), r["pattern"], r["seed"]))
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['pattern']} | {r['training']} | {r['seed']} | {r['epochs']} "
            f"| {r['threads']} | {r['seconds']:.0f} |"
        )
    total = sum(r["seconds"] for r in rows)
    lines += ["", f"{len(rows)} trained runs, {total:.0f} s of training in total ({total / 60:.1f} min)."]
    return "\n".join(lines) + "\n"


@cli.command("run")
@click.option("--sherliic-test", metavar="PATH", help="SherLIiC test file: release CSV (22 columns) or TSV.")
@click.option("--relation-index", metavar="PATH", help="relation_index.tsv for the release CSV's rel ids.")
@click.option(
    "--levy-holt-test", metavar="PATH", help="Levy/Holt test file, or a folder of <subset>/test.txt files."
)
@click.option("--no-load", is_flag=True, help="Use the benchmarks already in the database.")
@click.option(
    "--datasets",
    multiple=True,
    callback=comma_list,
    metavar="NAME[,NAME]",
    help="Only these datasets (e.g. sherliic,levy_holt); repeatable.",
)
@workers_option
@out_option
@target_options(engines=ENGINES, build=True)
def run_command(
    target: Target,
    sherliic_test: str | None,
    relation_index: str | None,
    levy_holt_test: str | None,
    no_load: bool,
    datasets: tuple[str, ...],
    workers: int | None,
    out: Path,
) -> int:
    """Train what is missing, score every benchmark, write the reports (`make lm`)."""
    settings = LmSettings.from_environment()
    record = PlanRecord.read(settings.run.runs_dir)
    # this run's patterns, and those of rows an earlier run left in the reports (their order there)
    register_methods(replace(settings, recorded=record.plans))
    models = installed_models(settings)
    options = EvaluationOptions(
        sherliic_test=sherliic_test,
        relation_index=relation_index,
        levy_holt_test=levy_holt_test,
        no_load=no_load,
        datasets=list(datasets) or None,
    )
    plan = settings.plan
    with command_context(target, shared_data=shared_data(), lm=settings) as ctx:
        # their rows must be of this build
        check_csv_build(out / "baselines.csv", ctx.build_ref)
        check_csv_build(out / "lm" / "seeds.csv", ctx.build_ref)
        prepared = prepare_evaluation(options, ctx)
        if prepared is None:
            return 1
        items, coverage = prepared
        names = [n for n in lm_method_names(plan) if n.split(" ", 1)[0].removeprefix("lm:") in models]
        print(f"LM methods ({', '.join(models)} installed): {len(names)}; plan: {plan}")
        fill_cache(items, planned_jobs(items, models, plan), settings, workers or default_workers())
        ctx.cache[ALLOW_COMPUTE] = True  # the jobs cached every planned run; compute rather than skip a gap
        ctx.cache[ITEMS] = items  # where a dataset's models find the items of the datasets they train on
        ev = evaluate_many([*names, COMBINATION], items, ctx)
        ev.extend(cv_evaluation([get(n) for n in names if n not in ev.skipped], items, ctx))
        ev = keep_rows(ev)
        for name, why in ev.skipped.items():
            print(f"skipped {name}: {why}")
        for name, why in ev.failed.items():
            print(f"FAILED {name}: {why}", file=sys.stderr)
        frame = merge_by_method(with_build(ev.frame(), ctx.build_ref), out / "baselines.csv", CSV_COLUMNS)
        report.write_csv(frame, out / "baselines.csv")
        sources = report.data_sources(target, sorted(set(items.dataset)), shared_data_dir(), ctx.warehouse)
        (out / "baselines.md").write_text(
            report.markdown(frame, catalog.ordered_names(), ev.skipped, ev.failed, coverage, sources)
        )
        plots = report.plot_curves(ev, out / "plots", owner="lm")  # out/plots/lm/ only
        store_results(target, ev.frame(), ctx.build_ref)
        # what was run: the readers of the cache score these rows with this plan (lm.plan)
        lm_rows = [(r["method"], r["dataset"]) for r in ev.rows if r["method"].startswith("lm:")]
        record.with_run(plan, settings.models, lm_rows).write(settings.run.runs_dir)
        (out / "lm").mkdir(parents=True, exist_ok=True)
        per_seed = seed_table(items, ctx, plan, [m for m in models if m in plan.finetune])
        build = ctx.build_ref
    if not per_seed.empty:
        per_seed = merge_by_method(with_build_columns(per_seed, build), out / "lm" / "seeds.csv")
    summary = seed_summary(per_seed)
    per_seed.to_csv(out / "lm" / "seeds.csv", index=False, float_format="%.6g")
    summary.to_csv(out / "lm" / "seeds_summary.csv", index=False, float_format="%.6g")
    (out / "lm" / "seeds.md").write_text(seeds_markdown(summary, build))
    (out / "lm" / "runs.md").write_text(runs_markdown(cached_runs(settings.run.runs_dir)))
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20):
        print(ev.frame().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(
        f"wrote {out / 'baselines.csv'}, {out / 'baselines.md'}, {len(plots)} plots in {out / 'plots/lm'}, "
        f"{out / 'lm' / 'seeds.md'}; {len(ev.rows)} rows in results.baseline_scores"
    )
    return 1 if ev.failed else 0


@cli.command("train")
@click.option(
    "--datasets",
    multiple=True,
    callback=comma_list,
    metavar="GLOB[,GLOB]",
    help="Dataset globs, e.g. 'levy_holt/*' (the six directional subsets); repeatable. Default: all.",
)
@click.option("--zero-shot", is_flag=True, help="Zero-shot cosine of every selected model.")
@click.option("--fine-tuned", is_flag=True, help="Every planned fine-tuned run (LM_* plan variables).")
@click.option(
    "--seeds",
    multiple=True,
    callback=seed_list,
    metavar="N[,N]",
    help="Only these seeds (default: LM_SEEDS).",
)
@workers_option
@target_options(engines=ENGINES)
def train_command(
    target: Target,
    datasets: tuple[str, ...],
    zero_shot: bool,
    fine_tuned: bool,
    seeds: tuple[int, ...],
    workers: int | None,
) -> int:
    """Fill the run cache for some datasets, without writing reports."""
    settings = LmSettings.from_environment()
    models = installed_models(settings)
    items = loaded_items(target)
    selected = selected_datasets(sorted({str(d) for d in items["dataset"]}), datasets or ("*",))
    items = items[items["dataset"].isin(selected)]
    plan = settings.plan
    jobs = planned_jobs(items, models, plan, zero_shot=zero_shot, fine_tuned=fine_tuned, seeds=seeds)
    ran = fill_cache(items, jobs, settings, workers or default_workers())
    print(f"cached: {', '.join(selected)} ({ran} of {len(jobs)} jobs run now)")
    return 0


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@cli.command("bench")
@click.option("--model", type=MODEL, default="minilm", show_default=True, help=MODEL_HELP)
@click.option(
    "--items",
    "n_items",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Training items per timed epoch.",
)
@out_option
def bench_command(model: str, n_items: int, out: Path) -> int:
    """Seconds per epoch (1 vs 2 torch threads) on SherLIiC lm_split=train items, and peak memory."""
    require_stack()
    from lm import encoder  # torch: the benchmark trains

    cache_dir = LmSettings.from_environment().run.cache_dir
    train, _ = sherliic_splits(shared_data_dir())
    train = train.iloc[:n_items]
    texts = [
        render("y because x", p, h) for p, h in zip(train.premise_text, train.hypothesis_text, strict=True)
    ]
    results = {"model": model, "n_items": len(texts), "pattern": "y because x", "runs": []}
    base = base_recipe(model)
    results["load_average_before"] = load_average()
    for threads in (1, 2):
        encoder.set_threads(threads)
        settings = replace(base, epochs=1, seed=0).train_settings()
        start = time.perf_counter()
        trained = encoder.fine_tune(
            model,
            texts,
            list(train.label),
            settings,
            desc=f"bench {model} {threads} thread(s) epoch",
            cache_dir=cache_dir,
        )
        epoch = time.perf_counter() - start
        start = time.perf_counter()
        encoder.predict(
            trained,
            model,
            texts,
            max_length=base.max_length,
            desc=f"bench {model} scoring",
            cache_dir=cache_dir,
        )
        scoring = time.perf_counter() - start
        results["runs"].append(
            {
                "threads": threads,
                "seconds_per_epoch": round(epoch, 2),
                "seconds_per_epoch_per_796_items": round(epoch * 796 / len(texts), 1),
                "scoring_items_per_second": round(len(texts) / scoring, 1),
            }
        )
    results["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    results["load_average_after"] = load_average()
    path = out / "bench" / f"lm_{model}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    print(f"wrote {path}")
    return 0


cli.add_command(select_command)  # `sherliic-lm select` (lm/selection_cli.py)
cli.add_command(select_report_command)  # `sherliic-lm select-report`: its report and cost plot again
cli.add_command(rank_command)  # `sherliic-lm rank` / `make rank` (lm/rank/)
cli.add_command(bench_rank_command)  # `make bench-rank`


def main(argv: list[str] | None = None) -> int:
    """Exit codes: 0 done, 1 a method failed or nothing to evaluate, 2 usage or user error (one line)."""
    try:
        return command_line.run(cli, argv, prog_name="python -m lm.cli")
    except ResourceMissing as exc:  # a model not installed, a run not trained under --no-train
        print_error(exc)
        return 2


if __name__ == "__main__":
    sys.exit(main())
