"""The tables and summary lines `sherliic-extract` prints (rich tables; print them whole with
:func:`warehouse.terminal.print_table`)."""

from __future__ import annotations

from rich.table import Table

from extract.batches.store import BatchSummary
from extract.load_plan import folded_lines


def batch_table(summaries: list[BatchSummary]) -> Table:
    """One line per batch this command loaded (or skipped)."""
    table = Table(title="load batches")
    text_columns = ("file", "corpus", "format", "status")
    for col in (
        "batch",
        "file",
        "corpus",
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
        table.add_column(col, justify="left" if col in text_columns else "right")
    for s in summaries:
        c = s.counts
        status = "skipped (already loaded)" if s.skipped else ("replaced" if s.replaced_batches else "loaded")
        table.add_row(
            str(s.batch_id),
            s.source_file.rsplit("/", 1)[-1],
            s.corpus_name or "",
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


def summary_tables(summary: dict) -> list[Table]:
    """The tables of `sherliic-extract summary` (:func:`extract.summary.database_summary`)."""
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
    corpora = Table(title="loaded corpora", min_width=60)
    for col in ("corpus", "batches", "documents", "instances", "parsed by"):
        corpora.add_column(col, justify="left" if col in ("corpus", "parsed by") else "right")
    for name, counts in summary["corpora"].items():
        numbers = (f"{counts[k]:,}" for k in ("batches", "documents", "instances"))
        corpora.add_row(name, *numbers, counts["parsers"] or "not recorded")
    sources = Table(title="typed entities per type source (all loaded type rows)", min_width=60)
    sources.add_column("type_source")
    sources.add_column("entities", justify="right")
    for source, n in summary["typed_entities_by_source"].items():
        sources.add_row(source, f"{n:,}")
    return [main, corpora, rules, sources]


def listing_table(rows: list[dict]) -> Table:
    """One line per batch, narrow enough for a 120-column log: type tables and maps belong to no corpus
    and show their kind (and type_source) in the corpus column."""
    table = Table(title="batches in raw.load_batches")
    text_columns = ("corpus", "file", "sha256", "status", "started (UTC)")
    for col in (
        "batch",
        "corpus",
        "file",
        "sha256",
        "docs",
        "instances",
        "rows",
        "status",
        "started (UTC)",
        "s",
    ):
        table.add_column(col, justify="left" if col in text_columns else "right", no_wrap=col != "file")
    for row in rows:
        started, finished = row["started_at"], row["finished_at"]
        seconds = f"{(finished - started).total_seconds():.1f}" if started and finished else ""
        if row["kind"] == "corpus":
            owner = row["corpus_name"] or ""
        else:
            owner = row["kind"] + (f" ({row['type_source']})" if row["type_source"] else "")
        table.add_row(
            str(row["batch_id"]),
            owner,
            row["source_file"].rsplit("/", 1)[-1],
            row["checksum"][:10],
            f"{row['n_documents']:,}",
            f"{row['n_instances']:,}",
            f"{row['n_rows']:,}",
            row["status"],
            started.strftime("%Y-%m-%d %H:%M") if started else "",
            seconds,
        )
    return table


def skipped_lines(summary: BatchSummary) -> list[str]:
    """What --skip-bad skipped, under the batch's own line: the count and the line numbers (folded:
    ``1, 4-6``), then the kept message of each skipped record, one line each."""
    n = summary.counts.get("bad_lines", 0)
    if not n:
        return []
    lines = f" at line(s) {folded_lines(summary.bad_line_numbers)}" if summary.bad_line_numbers else ""
    more = n - len(summary.bad_lines)
    tail = [f"    ... and {more:,} more (the first {len(summary.bad_lines)} are kept)"] if more > 0 else []
    return [f"  skipped {n:,} bad record(s){lines}:", *(f"    {m}" for m in summary.bad_lines), *tail]
