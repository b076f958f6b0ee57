"""`sherliic-baselines`: load the benchmarks, run baselines, write out/baselines.{csv,md}, PR plots and
results.baseline_scores.

  sherliic-baselines list
  sherliic-baselines all [--sherliic-test PATH [--relation-index PATH]] [--levy-holt-test PATH]
  sherliic-baselines one NAME [same options]
  sherliic-baselines load FILE --format FMT [--dataset D] [--split S] [--replace]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click
import pandas as pd

from baselines import catalog, datasets, report
from baselines.context import command_context
from baselines.evaluate import CSV_COLUMNS, builds_of, evaluate_many, store_results, with_build
from baselines.lm.methods import keep_rows, register_methods
from baselines.lm.plan import LmSettings
from baselines.lm.selection import pd_cv_evaluation
from baselines.registry import Context, get, resolve
from warehouse.builds import BuildRef, check_same_build
from warehouse.command_line import CONTEXT, run, target_options, version_option
from warehouse.errors import InputError
from warehouse.marts import Marts
from warehouse.settings import out_folder, shared_data_dir
from warehouse.target import ENGINES, Target
from warehouse.terminal import Progress


@dataclass(frozen=True)
class EvaluationOptions:
    """The options of `all` and `one`, and of `make lm` (baselines/lm/cli.py)."""

    sherliic_test: str | None = None
    relation_index: str | None = None
    levy_holt_test: str | None = None
    datasets: list[str] | None = None
    no_load: bool = False
    no_lemma: bool = False
    out: Path = field(default_factory=out_folder)


def _load_benchmarks(target: Target, args: EvaluationOptions) -> None:
    files: list[tuple[Path, str, dict]] = []
    shared = shared_data_dir()
    if shared.is_dir():
        files += [(p, fmt, {}) for p, fmt in datasets.shared_benchmark_files(shared)]
    else:
        print(f"shared data folder {shared} not found (set SHERLIIC_DATA); only given files are loaded")
    if args.sherliic_test:
        test = Path(args.sherliic_test)
        if test.suffix == ".csv":
            files.append(
                (
                    test,
                    "sherliic_csv",
                    {"dataset": "sherliic", "split": "test", "relation_index": args.relation_index},
                )
            )
        else:
            files.append((test, "sherliic_tsv", {"dataset": "sherliic", "split": "test"}))
    if args.levy_holt_test:
        files += levy_holt_test_files(Path(args.levy_holt_test))
    bar = Progress(files, unit="file", lines=False)  # a line per file below, bar or not
    for i, (path, fmt, kw) in enumerate(bar):
        bar.set_description(f"benchmark file {path.name}")
        try:
            summary = datasets.load_benchmark(target, path, fmt, show_progress=False, **kw)
        except InputError as exc:
            rest = [str(p) for p, _, _ in files[i + 1 :]]
            if rest:  # printed under the error line (warehouse.errors.print_error)
                exc.add_note(f"not tried after this error ({len(rest)}): {' '.join(rest)}")
            raise
        state = "already loaded" if summary.skipped else "loaded"
        Progress.write(
            f"{state}: {summary.dataset}/{summary.split} {summary.n_items} items, "
            f"{summary.n_mapped} with both paths ({path.name})"
        )


def levy_holt_test_files(path: Path) -> list[tuple[Path, str, dict]]:
    """`--levy-holt-test`: one test file (dataset levy_holt), or a folder laid out like the shared
    teddy_li/ folder: <folder>/test.txt per directional subset (dataset levy_holt/<folder>);
    orig/ is dataset levy_holt."""
    if not path.is_dir():
        return [(path, "levy_holt", {"dataset": "levy_holt", "split": "test"})]
    found = [(f, "levy_holt", {"split": "test"}) for f in sorted(path.glob("*/test.txt"))]
    if not found:
        raise InputError(str(path), None, "folder holds no <subset>/test.txt (expected the teddy_li layout)")
    return found


def _coverage(items: pd.DataFrame, warehouse: Target | Marts) -> pd.DataFrame:
    cov = datasets.warehouse_coverage(items, warehouse)
    print("coverage per dataset (items with both paths; both relations in the build's relations mart):")
    for r in cov.itertuples():
        wh = (
            "warehouse not built"
            if r.n_in_warehouse is None or r.n_in_warehouse != r.n_in_warehouse
            else f"{int(r.n_in_warehouse)} in warehouse"
        )
        print(f"  {r.dataset:32s} {r.split:6s} {r.n_with_paths:5d}/{r.n_items:<5d} with paths, {wh}")
    return cov


def shared_data() -> Path | None:
    """The shared data folder (SHERLIIC_DATA) when it exists."""
    shared = shared_data_dir()
    return shared if shared.is_dir() else None


def prepare_evaluation(args: EvaluationOptions, ctx: Context) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """What every evaluation command does first, in the command's Context (baselines.context): load the
    benchmark files (unless --no-load), read the items of the selected datasets and report their
    coverage: (items, coverage). None (after a message) when no items are loaded.

    The benchmark items and the results live in Postgres on either engine (small tables the baselines
    load and write); on Spark the Context holds the Spark marts, which the baselines read."""
    target = ctx.target
    target.on_postgres().ensure_schema()
    if not args.no_load:
        _load_benchmarks(target, args)
    items = datasets.load_items(target, args.datasets)
    if items.empty:
        print("no benchmark items loaded; nothing to evaluate", file=sys.stderr)
        return None
    return items, _coverage(items, ctx.warehouse)


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
        ev.extend(pd_cv_evaluation([get(n) for n in scored], items, ctx))  # as `make lm` writes them
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


def check_csv_build(path: Path, build: BuildRef) -> None:
    """Refuse (one line) to add rows of `build` to a results CSV holding another build's rows."""
    if path.is_file():
        check_same_build(builds_of(pd.read_csv(path)), build, str(path))


def registered_methods() -> LmSettings:
    """Register every baseline, with the `lm:` methods of the plans `make lm` recorded; their settings."""
    lm = LmSettings.as_recorded()
    catalog.load_all()
    register_methods(lm)
    return lm


def _comma_list(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[str] | None:
    """`--datasets a,b --datasets c` -> [a, b, c]; None when not given (every dataset)."""
    names = [part.strip() for v in value for part in v.split(",") if part.strip()]
    return names or None


def evaluation_options(function: Callable) -> Callable:
    """The options of `all` and `one`."""
    options = [
        click.option(
            "--sherliic-test", metavar="PATH", help="SherLIiC test file: release CSV (22 columns) or TSV."
        ),
        click.option("--relation-index", metavar="PATH", help="relation_index.tsv for the release CSV."),
        click.option(
            "--levy-holt-test",
            metavar="PATH",
            help="Levy/Holt test file (Teddy-Li layout), or a folder of <subset>/test.txt files.",
        ),
        click.option(
            "--datasets",
            multiple=True,
            callback=_comma_list,
            metavar="NAME[,NAME]",
            help="Only these datasets (e.g. sherliic,levy_holt,zeichner); repeatable.",
        ),
        click.option("--no-load", is_flag=True, help="Use the benchmarks already in the database."),
        click.option("--no-lemma", is_flag=True, help="Do not combine with Lemma."),
        click.option(
            "--out",
            type=click.Path(file_okay=False, path_type=Path),
            default=out_folder,
            show_default="out",
            help="Output folder.",
        ),
        target_options(engines=ENGINES, build=True),
    ]
    for option in reversed(options):
        function = option(function)
    return function


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
