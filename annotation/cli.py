"""`sherliic-annotate`: sample InfCands, export/import annotation batches, serve the local annotation
page, aggregate judgements into gold labels and export the SherLIiC dev/test CSVs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from warehouse.errors import DatabaseUnavailable, InputError, print_error
from warehouse.settings import OUT_DIR

ANNOTATION_OUT = OUT_DIR / "annotation"


def _cmd_sample(args: argparse.Namespace) -> int:
    from annotation.sampling import export_batch_csv, sample_batch

    summary = sample_batch(
        args.batch,
        args.premises,
        hypotheses_per_premise=args.hypotheses,
        seed=args.seed,
        stratify_by=args.stratify_by,
        task=args.task,
    )
    out = Path(args.out) if args.out else ANNOTATION_OUT / f"{args.batch}.csv"
    n_rows = export_batch_csv(args.batch, out) if summary.n_items else 0
    print(
        f"batch {summary.batch_name}: {summary.n_premises} premises, {summary.n_items} items; "
        f"crowdsourcing CSV ({n_rows} rows): {out}"
    )
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from annotation.sampling import export_batch_csv

    out = Path(args.out) if args.out else ANNOTATION_OUT / f"{args.batch}.csv"
    n_rows = export_batch_csv(args.batch, out)
    print(f"wrote {n_rows} premise rows to {out}")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from annotation.results import import_results

    n = import_results(Path(args.file), task=args.task)
    print(f"imported {n} new judgements from {args.file}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from annotation.server import make_server

    server = make_server(port=args.port, target=args.target)
    host, port = server.server_address[:2]
    print(f"annotation page: http://{host}:{port}/?task={args.task} (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _cmd_aggregate(args: argparse.Namespace) -> int:
    from annotation.dataset import aggregate, statistics

    aggregate(dbt_vars=json.loads(args.vars) if args.vars else None)
    for row in statistics(args.task):
        print(f"{row['split']:>5}  {row['statistic']:<28} {row['value']:g}")
    return 0


def _cmd_export_dataset(args: argparse.Namespace) -> int:
    from annotation.dataset import export_dataset

    out = Path(args.out) if args.out else ANNOTATION_OUT / f"{args.task}_dataset"
    counts = export_dataset(out, task=args.task)
    print(f"wrote dev.csv ({counts['dev']} items) and test.csv ({counts['test']} items) to {out}")
    return 0


def _cmd_render(args: argparse.Namespace) -> int:
    from annotation.render import render_relation

    rendering = render_relation(args.path, args.type_a, args.type_b)
    print(rendering.text)
    return 0


def _cmd_check_templates(args: argparse.Namespace) -> int:
    from annotation.template_check import check_templates
    from warehouse.settings import require_shared_data

    dev = Path(args.dev) if args.dev else require_shared_data() / "sherliic" / "dev.tsv"
    result = check_templates(dev)
    print(
        f"exact match: {result.n_exact}/{result.n_templates} templates = {result.rate:.1%}; "
        f"items with both sides exact: {result.n_items_exact}/{result.n_items} = {result.item_rate:.1%}"
    )
    for klass, n in result.classes.most_common():
        print(f"  {n:4d}  {klass}")
    ANNOTATION_OUT.mkdir(parents=True, exist_ok=True)
    failures = ANNOTATION_OUT / "template_failures.tsv"
    with failures.open("w", encoding="utf-8") as handle:
        handle.write("path\texpected\trendered\tclass\n")
        for row in result.failures:
            handle.write("\t".join(row) + "\n")
    print(f"failures: {failures}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sherliic-annotate", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("sample", help="sample InfCands into a batch and write the crowdsourcing CSV")
    p.add_argument("--batch", required=True, help="batch name (unique)")
    p.add_argument("--premises", type=int, default=50, help="number of premise facts (default 50)")
    p.add_argument("--hypotheses", type=int, default=3, help="candidate hypotheses per premise (default 3)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--stratify-by", default="none", choices=["none", "alignment", "score_quartile", "hypothesis_rank"]
    )
    p.add_argument("--task", default="sherliic", choices=["sherliic", "zeichner"])
    p.add_argument("--out", help="CSV path (default out/annotation/<batch>.csv)")
    p.set_defaults(func=_cmd_sample)

    p = sub.add_parser("export", help="write a batch's crowdsourcing CSV again")
    p.add_argument("--batch", required=True)
    p.add_argument("--out")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("import", help="import a results CSV (item_id, worker_id, answer[, meaningful flags])")
    p.add_argument("file")
    p.add_argument("--task", default="sherliic", choices=["sherliic", "zeichner"])
    p.set_defaults(func=_cmd_import)

    p = sub.add_parser("serve", help="serve the local annotation page on 127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--target", type=int, default=5, help="judgements wanted per item (default 5)")
    p.add_argument(
        "--task", default="sherliic", choices=["sherliic", "zeichner"], help="task shown in the printed link"
    )
    p.set_defaults(func=_cmd_serve)

    p = sub.add_parser("aggregate", help="dbt build of the annotation marts; prints the Table 2 statistics")
    p.add_argument("--task", default="sherliic", choices=["sherliic", "zeichner"])
    p.add_argument("--vars", help="dbt vars as JSON, e.g. '{\"annotation_min_trust\": 0.8}'")
    p.set_defaults(func=_cmd_aggregate)

    p = sub.add_parser(
        "export-dataset", help="write the gold items as SherLIiC dev.csv/test.csv (22 columns)"
    )
    p.add_argument("--task", default="sherliic", choices=["sherliic", "zeichner"])
    p.add_argument("--out", help="folder (default out/annotation/<task>_dataset)")
    p.set_defaults(func=_cmd_export_dataset)

    p = sub.add_parser("render", help="render one path as an English sentence")
    p.add_argument("path")
    p.add_argument("type_a", nargs="?")
    p.add_argument("type_b", nargs="?")
    p.set_defaults(func=_cmd_render)

    p = sub.add_parser("check-templates", help="exact-match rate of the renderer vs SherLIiC-dev's templates")
    p.add_argument("--dev", help="path of sherliic/dev.tsv (default: the shared data folder)")
    p.set_defaults(func=_cmd_check_templates)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (InputError, DatabaseUnavailable) as error:
        print_error(error)
        return 2
    except (ValueError, FileNotFoundError) as error:
        print_error(error)
        return 2


if __name__ == "__main__":
    sys.exit(main())
