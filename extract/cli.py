"""``sherliic-extract``: load corpora, type tables and type maps into the raw schema; summarise it.

    sherliic-extract corpus --format F [--replace] [--skip-bad] [--processes N] [--limit N]
                            [--ner-types] [--ner-mentions] [--docs-dir DIR] FILE...
    sherliic-extract types --format tsv|ntriples|textent [--type-source S] FILE...
    sherliic-extract type-map FILE...
    sherliic-extract real [--processes 2] [--limit N] [--ner-mentions] [--no-ner-types] [--only fewrel,trex]
    sherliic-extract summary [--json]

Bad input ends with exit code 2 and ``error: FILE:LINE: problem`` (no traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from extract import batches
from extract.batches import BatchSummary
from extract.formats import FORMATS
from extract.summary import database_summary
from extract.types import TYPE_FORMATS
from warehouse.engine import current_engine
from warehouse.errors import DatabaseUnavailable, InputError, print_error

console = Console(stderr=True)
out = Console(width=None if sys.stdout.isatty() else 120)  # tables readable in logs


def _progress_factory(enabled: bool) -> Callable[[str], Callable[[int], None] | None]:
    """A tqdm bar per file (documents done, docs/s); disabled with --quiet."""
    from tqdm import tqdm

    bars: list = []

    def make(label: str) -> Callable[[int], None] | None:
        for bar in bars:
            bar.close()
        bars.clear()
        if not enabled or not label:
            return None
        bar = tqdm(desc=label, unit="doc", file=sys.stderr, dynamic_ncols=True, leave=False)
        bars.append(bar)
        return bar.update

    return make


def _batch_table(summaries: list[BatchSummary]) -> Table:
    table = Table(title="load batches")
    for col in (
        "batch",
        "file",
        "format",
        "status",
        "documents",
        "instances",
        "rejected",
        "entities",
        "rows",
        "bad lines",
        "seconds",
    ):
        table.add_column(col, justify="right" if col not in ("file", "format", "status") else "left")
    for s in summaries:
        c = s.counts
        status = "skipped (already loaded)" if s.skipped else ("replaced" if s.replaced_batches else "loaded")
        table.add_row(
            str(s.batch_id),
            s.source_file.rsplit("/", 1)[-1],
            s.source_format,
            status,
            f"{c.get('documents', 0):,}",
            f"{c.get('instances', 0):,}",
            f"{c.get('rejected', 0):,}",
            f"{c.get('entities', 0):,}",
            f"{c.get('rows', 0):,}",
            f"{c.get('bad_lines', 0):,}",
            f"{s.seconds:.1f}",
        )
    return table


def _summary_tables(summary: dict) -> list[Table]:
    main = Table(title="raw schema summary", min_width=60)
    main.add_column("measure")
    main.add_column("value", justify="right")
    rows = [
        ("documents (corpus batches)", summary["documents"]),
        ("sentences parsed", summary["sentences_parsed"]),
        ("sentences with kept paths", summary["tables"]["sentences"]),
        ("mentions", summary["mentions"]),
        ("paths kept (relation instances)", summary["paths_kept"]),
        ("paths rejected", summary["paths_rejected"]),
        ("relations (distinct paths)", summary["relations"]),
        ("relations with >= 5 entity pairs", summary["relations_with_5_pairs"]),
        ("entities", summary["entities"]),
        ("typed entities", f"{summary['typed_entities']:,} ({summary['typed_share']:.1%})"),
        ("entities in relation instances", summary["graph_entities"]),
        ("typed among them", f"{summary['typed_graph_entities']:,} ({summary['typed_graph_share']:.1%})"),
        ("entity_types rows", summary["tables"]["entity_types"]),
        ("type_mappings rows", summary["tables"]["type_mappings"]),
    ]
    for name, value in rows:
        main.add_row(name, f"{value:,}" if isinstance(value, int) else str(value))
    rules = Table(title="rejected paths per rule", min_width=60)
    rules.add_column("rule")
    rules.add_column("paths", justify="right")
    for rule, n in summary["rejections"].items():
        rules.add_row(rule, f"{n:,}")
    sources = Table(title="typed entities per type source (all loaded type rows)", min_width=60)
    sources.add_column("type_source")
    sources.add_column("entities", justify="right")
    for source, n in summary["typed_entities_by_source"].items():
        sources.add_row(source, f"{n:,}")
    return [main, rules, sources]


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sherliic-extract", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="database URL (default: DATABASE_URL or the embedded server)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--summary-json", help="also write the load batches' summaries as JSON to this file")
    sub = parser.add_subparsers(dest="command", required=True)

    corpus = sub.add_parser(
        "corpus", help="extract paths from corpus files and load them (one batch per file)"
    )
    corpus.add_argument("--format", required=True, choices=sorted(FORMATS))
    corpus.add_argument("--replace", action="store_true", help="reload a file that is already loaded")
    corpus.add_argument("--skip-bad", action="store_true", help="skip and count bad lines instead of failing")
    corpus.add_argument(
        "--processes", type=int, default=1, help="processes that parse and extract (default 1)"
    )
    corpus.add_argument("--limit", type=int, help="read at most N documents per file")
    corpus.add_argument("--ner-types", action="store_true", help="type linked mentions with spaCy NER labels")
    corpus.add_argument(
        "--ner-mentions",
        action="store_true",
        help="also add spaCy NER entities of the same sentences (id = normalised name)",
    )
    corpus.add_argument(
        "--docs-dir", help="facc1: folder with the document texts (default: the TSV's folder)"
    )
    corpus.add_argument("--min-posterior", type=_finite, default=0.0, help="facc1: minimum entity posterior")
    corpus.add_argument("files", nargs="+")

    types = sub.add_parser("types", help="load entity-type tables")
    types.add_argument("--format", required=True, choices=TYPE_FORMATS)
    types.add_argument("--type-source", help="type_source to store (default: freebase, or figer for textent)")
    types.add_argument("--replace", action="store_true")
    types.add_argument("--skip-bad", action="store_true")
    types.add_argument("files", nargs="+")

    tmap = sub.add_parser("type-map", help="load a Freebase→FIGER type map (FIGER's types.map)")
    tmap.add_argument("--replace", action="store_true")
    tmap.add_argument("--skip-bad", action="store_true")
    tmap.add_argument("files", nargs="+")

    real = sub.add_parser("real", help="extract the shared real corpora with the shared type tables")
    real.add_argument("--processes", type=int, default=2)
    real.add_argument("--limit", type=int, help="read at most N documents per file (quick runs)")
    real.add_argument(
        "--ner-mentions",
        action="store_true",
        help="also add spaCy NER entities co-occurring in the sentences",
    )
    real.add_argument("--no-ner-types", action="store_true", help="do not type QID entities with NER labels")
    real.add_argument(
        "--only",
        default=",".join(("fewrel", "trex", "google_re", "grec")),
        help="comma-separated corpus groups: fewrel,trex,google_re,grec",
    )
    real.add_argument("--replace", action="store_true")
    real.add_argument("--json", help="also write the summary as JSON to this file")

    summary = sub.add_parser("summary", help="counts per table, rejections per rule, typed-entity share")
    summary.add_argument("--json", action="store_true", help="print JSON instead of tables")
    return parser


def _loaders(command: str) -> tuple:
    """load_corpus, load_types, load_type_map of the engine (SHERLIIC_ENGINE); Nones for a command
    the engine does not have."""
    if current_engine() == "postgres" or command == "summary":  # summary: either engine (extract.summary)
        return batches.load_corpus, batches.load_types, batches.load_type_map
    if command in ("corpus", "types", "type-map"):
        return _spark_loaders(command)
    return None, None, None


def _spark_loaders(command: str) -> tuple[Callable, Callable, Callable]:
    """SHERLIIC_ENGINE=spark: the Spark loaders (extract.spark_load) behind load_corpus, load_types and
    load_type_map's signatures (the url argument is the Spark catalog's, ignored)."""
    from extract import spark_load
    from warehouse.engine import spark_session

    spark = spark_session(f"sherliic-extract-{command}")

    def corpus(file, fmt, _url, processes: int = 1, **kwargs):  # noqa: ARG001 - Spark's cores decide
        return spark_load.load_corpus(spark, file, fmt, **kwargs)

    def types(file, fmt, _url, **kwargs):
        return spark_load.load_types(spark, file, fmt, **kwargs)

    def type_map(file, _url, **kwargs):
        return spark_load.load_type_map(spark, file, **kwargs)

    return corpus, types, type_map


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    progress = _progress_factory(not args.quiet)
    summaries: list[BatchSummary] = []
    load_corpus, load_types, load_type_map = _loaders(args.command)
    if load_corpus is None:
        print_error(f"sherliic-extract {args.command} runs on Postgres only; unset SHERLIIC_ENGINE=spark")
        return 2
    # Files still to load: after an error, the rest are named as not tried.
    pending: list[str] = list(getattr(args, "files", []))

    def done(summary: BatchSummary) -> None:
        if pending:
            pending.pop(0)
        summaries.append(summary)
        progress("")  # closes the file's bar
        console.print(summary.message, markup=False, highlight=False, soft_wrap=True)

    try:
        if args.command == "corpus":
            options = {}
            if args.format == "facc1":
                options = {"docs_dir": args.docs_dir, "min_posterior": args.min_posterior}
            for file in args.files:
                done(
                    load_corpus(
                        file,
                        args.format,
                        args.url,
                        replace=args.replace,
                        skip_bad=args.skip_bad,
                        processes=args.processes,
                        ner_types=args.ner_types,
                        ner_mentions=args.ner_mentions,
                        limit=args.limit,
                        reader_options=options,
                        progress=progress(file),
                    )
                )
        elif args.command == "types":
            for file in args.files:
                done(
                    load_types(
                        file,
                        args.format,
                        args.url,
                        replace=args.replace,
                        skip_bad=args.skip_bad,
                        type_source=args.type_source,
                    )
                )
        elif args.command == "type-map":
            for file in args.files:
                done(load_type_map(file, args.url, replace=args.replace, skip_bad=args.skip_bad))
        elif args.command == "real":
            from extract.real import CORPUS_GROUPS, run_real

            only = tuple(g.strip() for g in args.only.split(",") if g.strip())
            unknown = set(only) - set(CORPUS_GROUPS)
            if unknown:
                print_error(f"unknown corpus group(s) {sorted(unknown)}; choose from {CORPUS_GROUPS}")
                return 2
            result = run_real(
                args.url,
                processes=args.processes,
                limit=args.limit,
                ner_types=not args.no_ner_types,
                ner_mentions=args.ner_mentions,
                replace=args.replace,
                only=only,
                on_batch=done,
                progress_factory=progress,
            )
            out.print(_batch_table(summaries))
            for table in _summary_tables(result):
                out.print(table)
            if args.json:
                with open(args.json, "w", encoding="utf-8") as handle:
                    json.dump(result, handle, indent=2, default=str)
            return 0
        elif args.command == "summary":
            result = database_summary(args.url)
            if args.json:
                print(json.dumps(result, indent=2))
            else:
                for table in _summary_tables(result):
                    out.print(table)
            return 0
    except (InputError, FileNotFoundError, DatabaseUnavailable) as exc:
        progress("")
        _add_multi_file_notes(exc, summaries, pending[1:])
        print_error(exc)
        return 2
    if summaries:
        out.print(_batch_table(summaries))
    if args.summary_json:
        with open(args.summary_json, "w", encoding="utf-8") as handle:
            json.dump([s.to_dict() for s in summaries], handle, indent=2)
    return 0


def _add_multi_file_notes(exc: Exception, summaries: list[BatchSummary], files: list[str]) -> None:
    """After a failed file of a multi-file load: which files were done before it (they stay loaded) and
    which were not tried (print_error prints the notes under the error line)."""
    if summaries:
        done = ", ".join(s.source_file.rsplit("/", 1)[-1] for s in summaries)
        exc.add_note(f"done before this error, kept ({len(summaries)}): {done}")
    if files:
        exc.add_note(f"not tried after this error ({len(files)}): {' '.join(files)}")


if __name__ == "__main__":
    sys.exit(main())
