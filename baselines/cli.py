"""`sherliic-baselines`: load the benchmarks, run baselines, write out/baselines.{csv,md}, PR plots and
results.baseline_scores.

  sherliic-baselines list
  sherliic-baselines all [--sherliic-test PATH [--relation-index PATH]] [--levy-holt-test PATH]
  sherliic-baselines one NAME [same options]
  sherliic-baselines load FILE --format FMT [--dataset D] [--split S] [--replace]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from baselines import catalog, datasets, report
from baselines.evaluate import RESULT_COLUMNS, evaluate_many, store_results
from baselines.lm.methods import keep_rows
from baselines.registry import Context, get
from warehouse import server
from warehouse.errors import DatabaseUnavailable, InputError, print_error
from warehouse.marts import Marts, session_marts
from warehouse.settings import OUT_DIR, shared_data_dir


def _load_benchmarks(url: str, args: argparse.Namespace) -> None:
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
    for i, (path, fmt, kw) in enumerate(tqdm(files, desc="benchmark files", unit="file")):
        try:
            summary = datasets.load_benchmark(path, fmt, url, show_progress=False, **kw)
        except InputError as exc:
            rest = [str(p) for p, _, _ in files[i + 1 :]]
            if rest:  # printed under the error line (warehouse.errors.print_error)
                exc.add_note(f"not tried after this error ({len(rest)}): {' '.join(rest)}")
            raise
        state = "already loaded" if summary.skipped else "loaded"
        tqdm.write(
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


def _coverage(items: pd.DataFrame, warehouse: str | Marts) -> pd.DataFrame:
    cov = datasets.warehouse_coverage(items, warehouse)
    print("coverage per dataset (items with both paths; both relations in warehouse.relations):")
    for r in cov.itertuples():
        wh = (
            "warehouse not built"
            if r.n_in_warehouse is None or r.n_in_warehouse != r.n_in_warehouse
            else f"{int(r.n_in_warehouse)} in warehouse"
        )
        print(f"  {r.dataset:32s} {r.split:6s} {r.n_with_paths:5d}/{r.n_items:<5d} with paths, {wh}")
    return cov


def prepare_evaluation(
    args: argparse.Namespace, marts: Marts | None = None
) -> tuple[str, pd.DataFrame, pd.DataFrame, Context] | None:
    """What every evaluation command does first: load the benchmark files (unless --no-load), read the
    items of the selected datasets, report their coverage and make the baselines' context. None (after
    a message) when no items are loaded.

    The benchmark items and the results live in Postgres on either engine (small tables the baselines
    load and write); `marts` (warehouse.marts.session_marts) are the marts of SHERLIIC_ENGINE=spark, which
    the baselines then read instead of Postgres'."""
    url = server.database_url()
    server.ensure_schema(url)
    if not args.no_load:
        _load_benchmarks(url, args)
    items = datasets.load_items(url, args.datasets)
    if items.empty:
        print("no benchmark items loaded; nothing to evaluate", file=sys.stderr)
        return None
    shared = shared_data_dir()
    ctx = Context(database_url=url, shared_data=str(shared) if shared.is_dir() else None, marts=marts)
    coverage = _coverage(items, ctx.warehouse)
    return url, items, coverage, ctx


def _run(names: list[str], args: argparse.Namespace, merge: bool) -> int:
    with session_marts() as marts:
        prepared = prepare_evaluation(args, marts)
        if prepared is None:
            return 1
        url, items, coverage, ctx = prepared
        ev = evaluate_many(names, items, ctx, on_top_of_lemma=False if args.no_lemma else None)
    ev = keep_rows(ev, only_lm=True)  # `lm:` rows as `make lm` writes them (docs/lm.md)
    for name, why in ev.skipped.items():
        print(f"skipped {name}: {why}")
    for name, why in ev.failed.items():
        print(f"FAILED {name}: {why}", file=sys.stderr)
    frame = ev.frame()
    out = Path(args.out)
    csv_path = out / "baselines.csv"
    if merge and csv_path.is_file():  # `one`: replace this method's rows, keep the others
        old = pd.read_csv(csv_path)
        keys = set(zip(frame.method, frame.dataset, frame.split, strict=True))
        old = old[[k not in keys for k in zip(old.method, old.dataset, old.split, strict=True)]]
        frame = pd.concat([old, frame], ignore_index=True)[RESULT_COLUMNS]
    report.write_csv(frame, csv_path)
    (out / "baselines.md").write_text(
        report.markdown(frame, catalog.ordered_names(), ev.skipped, ev.failed, coverage)
    )
    plots = report.plot_curves(ev, out / "plots")
    store_results(ev.frame(), url)
    shown = ev.frame()
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20):
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(
        f"wrote {csv_path}, {out / 'baselines.md'}, {len(plots)} plots in {out / 'plots'}; "
        f"{len(shown)} rows in results.baseline_scores"
    )
    return 1 if ev.failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sherliic-baselines", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the registered baselines")

    def run_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--sherliic-test", help="SherLIiC test file: release CSV (22 columns) or the TSV layout"
        )
        p.add_argument("--relation-index", help="relation_index.tsv for the release CSV's rel ids")
        p.add_argument(
            "--levy-holt-test",
            help="Levy/Holt test file (Teddy-Li layout), or a folder of <subset>/test.txt files",
        )
        p.add_argument("--datasets", nargs="*", help="only these datasets (e.g. sherliic levy_holt zeichner)")
        p.add_argument("--no-load", action="store_true", help="use the benchmarks already in the database")
        p.add_argument("--no-lemma", action="store_true", help="do not combine with Lemma")
        p.add_argument("--out", default=str(OUT_DIR), help="output folder (default: out/)")

    run_options(sub.add_parser("all", help="run every baseline"))
    one = sub.add_parser("one", help="run one baseline")
    one.add_argument("name")
    run_options(one)
    load = sub.add_parser("load", help="load one benchmark file into raw.benchmark_items")
    load.add_argument("file")
    load.add_argument("--format", required=True, choices=datasets.FORMATS)
    load.add_argument("--dataset")
    load.add_argument("--split")
    load.add_argument("--relation-index")
    load.add_argument("--replace", action="store_true")
    args = parser.parse_args(argv)

    registry = catalog.load_all()
    try:
        if args.command == "list":
            for name in catalog.ordered_names():
                bl = registry[name]
                kind = "tunable" if bl.tunable else "non-tunable"
                print(f"{name:40s} {kind:12s} {bl.description}")
            return 0
        if args.command == "load":
            s = datasets.load_benchmark(
                args.file,
                args.format,
                dataset=args.dataset,
                split=args.split,
                relation_index=args.relation_index,
                replace=args.replace,
            )
            print(
                f"{'already loaded' if s.skipped else 'loaded'} batch {s.batch_id}: {s.dataset}/{s.split} "
                f"{s.n_items} items, {s.n_mapped} with both paths"
            )
            return 0
        if args.command == "one":
            try:
                get(args.name)
            except KeyError as exc:
                print(exc.args[0], file=sys.stderr)
                return 2
            return _run([args.name], args, merge=True)
        return _run(catalog.ordered_names(), args, merge=False)
    except (InputError, DatabaseUnavailable) as exc:
        print_error(exc)
        return 2


if __name__ == "__main__":
    sys.exit(main())
