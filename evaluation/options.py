"""What the evaluation commands share (`sherliic-baselines all|one`, `sherliic-lm run`): their options,
the loading of the benchmark files they name, the items and their coverage, the results CSV's build check."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click
import pandas as pd

from builds.records import BuildRef, check_same_build
from evaluation import datasets
from evaluation.evaluate import builds_of
from evaluation.registry import Context
from warehouse.command_line import OUTPUT_FOLDER, target_options
from warehouse.errors import InputError
from warehouse.settings import out_folder, shared_data_dir
from warehouse.target import ENGINES, Marts, Target
from warehouse.terminal import Progress


@dataclass(frozen=True)
class EvaluationOptions:
    """The options of `all` and `one`, and of `make lm` (lm/cli.py)."""

    sherliic_test: str | None = None
    relation_index: str | None = None
    levy_holt_test: str | None = None
    datasets: list[str] | None = None
    no_load: bool = False
    no_lemma: bool = False
    out: Path = field(default_factory=out_folder)


def load_benchmarks(target: Target, args: EvaluationOptions) -> None:
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


def coverage(items: pd.DataFrame, warehouse: Target | Marts) -> pd.DataFrame:
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
    """What every evaluation command does first, in the command's Context (evaluation.context): load the
    benchmark files (unless --no-load), read the items of the selected datasets and report their
    coverage: (items, coverage). None (after a message) when no items are loaded.

    The benchmark items and the results live in Postgres on either engine (small tables the baselines
    load and write); on Spark the Context holds the Spark marts, which the baselines read."""
    target = ctx.target
    target.on_postgres().ensure_schema()
    if not args.no_load:
        load_benchmarks(target, args)
    items = datasets.load_items(target, args.datasets)
    if items.empty:
        print("no benchmark items loaded; nothing to evaluate", file=sys.stderr)
        return None
    return items, coverage(items, ctx.warehouse)


def check_csv_build(path: Path, build: BuildRef) -> None:
    """Refuse (one line) to add rows of `build` to a results CSV holding another build's rows."""
    if path.is_file():
        check_same_build(builds_of(pd.read_csv(path)), build, str(path))


def comma_list(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[str] | None:
    """`--datasets a,b --datasets c` -> [a, b, c]; None when not given (every dataset)."""
    names = [part.strip() for v in value for part in v.split(",") if part.strip()]
    return names or None


def evaluation_options(function: Callable) -> Callable:
    """The options of `sherliic-baselines all` and `one`."""
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
            callback=comma_list,
            metavar="NAME[,NAME]",
            help="Only these datasets (e.g. sherliic,levy_holt,zeichner); repeatable.",
        ),
        click.option("--no-load", is_flag=True, help="Use the benchmarks already in the database."),
        click.option("--no-lemma", is_flag=True, help="Do not combine with Lemma."),
        click.option(
            "--out",
            type=OUTPUT_FOLDER,
            default=out_folder,
            show_default="out",
            help="Output folder.",
        ),
        target_options(engines=ENGINES, build=True),
    ]
    for option in reversed(options):
        function = option(function)
    return function
