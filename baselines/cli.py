"""`sherliic-baselines`: load the benchmarks, run baselines, write out/baselines.{csv,md}, PR plots and
results.baseline_scores.

  sherliic-baselines list
  sherliic-baselines all [--sherliic-test PATH [--relation-index PATH]] [--levy-holt-test PATH]
  sherliic-baselines one NAME [same options]
  sherliic-baselines load FILE --format FMT [--dataset D] [--split S] [--replace]
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pandas as pd

from builds.records import check_same_build
from evaluation import catalog, datasets, report
from evaluation.context import command_context
from evaluation.evaluate import CSV_COLUMNS, builds_of, evaluate_many, store_results, with_build
from evaluation.options import (
    EvaluationOptions,
    check_csv_build,
    evaluation_options,
    prepare_evaluation,
    shared_data,
)
from evaluation.registry import get, resolve
from lm.methods import keep_rows, register_methods
from lm.plan import LmSettings
from lm.selection import cv_evaluation
from warehouse.command_line import CONTEXT, run, target_options, version_option
from warehouse.settings import shared_data_dir
from warehouse.target import ENGINES, Target


def _run(target: Target, names: list[str], args: EvaluationOptions, lm: LmSettings, merge: bool) -> int:
    out = Path(args.out)
    csv_path = out / "baselines.csv"
    with command_context(target, shared_data=shared_data(), lm=lm) as ctx:
        build = ctx.build_ref
        if merge:  # refused before any work when the file holds another build's rows
            check_csv_build(csv_path, build)
        prepared = prepare_evaluation(args, ctx)
        if prepared is None:
            return 1
        items, coverage = prepared
        ev = evaluate_many(names, items, ctx, on_top_of_lemma=False if args.no_lemma else None)
        scored = [n for n in names if n.startswith("lm:") and n not in {**ev.skipped, **ev.failed}]
        ev.extend(cv_evaluation([get(n) for n in scored], items, ctx))  # as `make lm` writes them
        sources = report.data_sources(target, sorted(set(items.dataset)), shared_data_dir(), ctx.warehouse)
        hint = report.real_corpus_hint(report.graph_corpora(ctx.warehouse))
    ev = keep_rows(ev, only_lm=True)  # `lm:` rows as `make lm` writes them (docs/lm.md)
    for line in report.skipped_lines(ev.skipped):
        print(f"skipped {line}")
    for name, why in ev.failed.items():
        print(f"FAILED {name}: {why}", file=sys.stderr)
    frame = with_build(ev.frame(), build)
    if merge and csv_path.is_file():  # `one`: replace this method's rows, keep the others (of one build)
        old = pd.read_csv(csv_path)
        check_same_build(builds_of(old), build, str(csv_path))
        keys = set(zip(frame.method, frame.dataset, frame.split, strict=True))
        old = old[[k not in keys for k in zip(old.method, old.dataset, old.split, strict=True)]]
        frame = pd.concat([old, frame], ignore_index=True)[CSV_COLUMNS]
    report.write_csv(frame, csv_path)
    (out / "baselines.md").write_text(
        report.markdown(frame, catalog.ordered_names(), ev.skipped, ev.failed, coverage, sources)
    )
    # `all` owns the plot folders (report.LM_FAMILY: all but out/plots/lm/) and removes stale figures;
    # `one` draws its method's figures and removes nothing
    plots = report.plot_curves(ev, out / "plots", owner=None if merge else "baselines")
    store_results(target, ev.frame(), build)
    shown = ev.frame()
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(report.compact_table(shown, catalog.ordered_names()))
    print(
        f"build {build.label}: wrote {csv_path}, {out / 'baselines.md'}, {len(plots)} plots in "
        f"{out / 'plots'}; {len(shown)} rows in results.baseline_scores"
    )
    print(f"every metric, split and directional subset: {out / 'baselines.md'} (table), {csv_path} (CSV)")
    if hint:
        print(f"the graph behind the warehouse-backed rows is {hint}")
    return 1 if ev.failed else 0


def registered_methods() -> LmSettings:
    """Register every baseline, with the `lm:` methods of the plans `make lm` recorded; their settings."""
    lm = LmSettings.as_recorded()
    catalog.load_all()
    register_methods(lm)
    return lm


@click.group(context_settings=CONTEXT)
@version_option
def cli() -> None:
    """Load the benchmarks, run the baselines, write out/baselines.{csv,md}, PR plots and
    results.baseline_scores.

    Benchmarks come from the shared data folder (SHERLIIC_DATA) and the files given as options.

    \b
    Examples:
      sherliic-baselines list
      sherliic-baselines all --sherliic-test test.csv --relation-index relation_index.tsv
      sherliic-baselines one Lemma --no-load
      sherliic-baselines load dev.tsv --format sherliic_tsv --dataset sherliic --split dev
    """


@cli.command("list")
def list_command() -> None:
    """List the registered baselines."""
    registered_methods()
    registry = catalog.load_all()
    for name in catalog.ordered_names():
        bl = registry[name]
        kind = "tunable" if bl.tunable else "non-tunable"
        print(f"{name:40s} {kind:12s} {bl.description}")


@cli.command("all")
@evaluation_options
def all_command(target: Target, **options) -> int:
    """Run every baseline.

    Exit code 1 when one of them fails."""
    lm = registered_methods()
    return _run(target, catalog.ordered_names(), EvaluationOptions(**options), lm, merge=False)


@cli.command("one")
@click.argument("name")
@evaluation_options
def one_command(target: Target, name: str, **options) -> int:
    """Run one baseline.

    NAME as `list` prints it, in any case, with or without spaces ("lemma", "always_yes", "AlwaysYes");
    its rows replace its old ones in baselines.csv."""
    lm = registered_methods()
    try:
        name = resolve(name)
    except KeyError as exc:
        raise click.BadParameter(exc.args[0], param_hint="NAME") from None
    return _run(target, [name], EvaluationOptions(**options), lm, merge=True)


@cli.command("load")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", required=True, type=click.Choice(datasets.FORMATS), help="File format.")
@click.option("--dataset", help="Dataset name (default: from the format).")
@click.option("--split", help="Split (default: from the file name).")
@click.option("--relation-index", metavar="PATH", help="relation_index.tsv for the release CSV's ids.")
@click.option("--replace", is_flag=True, help="Replace an earlier load of the same file.")
@target_options(engines=ENGINES)
def load_command(
    target: Target,
    file: Path,
    fmt: str,
    dataset: str | None,
    split: str | None,
    relation_index: str | None,
    replace: bool,
) -> None:
    """Load one benchmark file into raw.benchmark_items (Postgres, on either engine)."""
    s = datasets.load_benchmark(
        target,
        file,
        fmt,
        dataset=dataset,
        split=split,
        relation_index=relation_index,
        replace=replace,
    )
    print(
        f"{'already loaded' if s.skipped else 'loaded'} batch {s.batch_id}: {s.dataset}/{s.split} "
        f"{s.n_items} items, {s.n_mapped} with both paths"
    )


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="sherliic-baselines")


if __name__ == "__main__":
    sys.exit(main())
