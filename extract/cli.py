"""``sherliic-extract``: load corpora, type tables and type maps into the raw schema; list, remove and
summarise what is loaded.

    sherliic-extract corpus --format F [--corpus NAME] [--replace] [--skip-bad] [--processes N]
                            [--limit N] [--ner-types] [--ner-mentions] [--on-duplicate error|skip]
                            [--alignment strict|expand|contract] [--spacy-model NAME]
                            [--docs-dir DIR] FILE...
    sherliic-extract types --format tsv|ntriples|textent --type-source S FILE...
    sherliic-extract type-map FILE...
    sherliic-extract real [--processes 2] [--limit N] [--ner-mentions] [--no-ner-types] [--only fewrel,trex]
    sherliic-extract batches [--corpus NAME] [--kind KIND] [--json]
    sherliic-extract remove [BATCH_ID...] [--corpus NAME...] [--missing-ok]
    sherliic-extract summary [--json]

Every command takes --database-url (default: DATABASE_URL, else the embedded server) and --engine
(default: SHERLIIC_ENGINE, else postgres), before or after the command: ONE Target is built from them
and handed to the loaders. Bad input ends with exit code 2 and ``error: FILE:LINE: problem`` (no
traceback); SIGINT and SIGTERM stop a load with one line and exit code 130 / 143, nothing of the file
being loaded kept.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import click
from rich.console import Console

from deppath.parsing import ALIGNMENTS, MODEL
from extract import loading
from extract.batches.store import BatchSummary, RemovedBatches, open_batch_store
from extract.formats import FORMAT_ALIASES, FORMATS
from extract.load_plan import ON_DUPLICATE, folded_lines
from extract.real import CORPUS_GROUPS, run_real
from extract.summary import database_summary, file_label
from extract.tables import batch_table, listing_table, skipped_lines, summary_tables
from extract.types import DEFAULT_SOURCE, TYPE_FORMATS
from warehouse.command_line import (
    CONTEXT,
    USER_ERRORS,
    SuggestingChoice,
    database_url_option,
    engine_option,
    run,
    target_options,
    version_option,
)
from warehouse.errors import Interrupted
from warehouse.target import ENGINES, Target
from warehouse.terminal import Progress, print_table

console = Console(stderr=True)
out = Console()
BATCH_KINDS = ("corpus", "types", "type_map", "benchmark", "annotation")
GROUP_TARGET_FLAGS = ("database_url", "engine")  # given before the command, they count for it


@dataclass
class Session:
    """The group's own options, shared by every command; the batch summaries of this invocation."""

    quiet: bool
    summary_json: str | None
    summaries: list[BatchSummary] = field(default_factory=list)


def _target_command(function: Callable) -> Callable:
    """A command that works on ONE Target (:func:`warehouse.command_line.target_options`, built once,
    when the command runs) from --database-url/--engine given after the command, else before it (the
    group's), else the environment."""
    command = target_options(engines=ENGINES)(function)

    @functools.wraps(command)
    def with_group_flags(*args: Any, **kwargs: Any) -> Any:
        group = click.get_current_context().find_root().params
        for name in GROUP_TARGET_FLAGS:  # after the command wins over before it
            if kwargs.get(name) is None:
                kwargs[name] = group.get(name)
        return command(*args, **kwargs)

    return with_group_flags


def _progress_factory(enabled: bool) -> Callable[[str], Callable[[int], None] | None]:
    """A bar per file (documents done, docs/s) labelled ``file i/N name``, on a terminal (in a log: the
    label as one line); ``make("")`` closes the current one. Disabled with --quiet."""
    bars: list[Progress] = []

    def make(label: str) -> Callable[[int], None] | None:
        for bar in bars:
            bar.close()
        bars.clear()
        if not enabled or not label:
            return None
        bar = Progress(desc=label, unit="doc", dynamic_ncols=True, leave=False)
        bars.append(bar)
        return bar.update

    return make


def _postgres_only(target: Target, command: str) -> None:
    if target.engine != "postgres":
        raise click.UsageError(
            f"sherliic-extract {command} runs on Postgres only; unset SHERLIIC_ENGINE=spark"
        )


def _load_files(session: Session, files: tuple[str, ...], load_one: Callable) -> None:
    """Load each file as one batch (``load_one(file, progress)``), printing each batch's message as it
    is done and the table at the end. On a user error: the files done before it (kept) and those not
    tried are added to the error's notes, then it goes to the one-line error output."""
    progress = _progress_factory(not session.quiet)
    for index, file in enumerate(files, start=1):
        try:
            summary = load_one(file, progress(file_label(index, len(files), file)))
        except USER_ERRORS as exc:
            _add_multi_file_notes(exc, session.summaries, list(files[index:]))
            raise
        except Interrupted as exc:  # SIGINT/SIGTERM: one line saying what was kept
            if not exc.detailed:  # stopped outside the batch's transaction: nothing of the file written
                exc = Interrupted(exc.signum, f"{exc.name}: stopped loading {file}; nothing of it was kept")
            _add_multi_file_notes(exc, session.summaries, list(files[index:]))
            raise exc from None
        finally:
            progress("")  # the file's bar is gone before any line is printed, an error's too
        _done(session, summary)
    print_table(out, batch_table(session.summaries))
    if session.summary_json:
        with open(session.summary_json, "w", encoding="utf-8") as handle:
            json.dump([s.to_dict() for s in session.summaries], handle, indent=2)


def _done(session: Session, summary: BatchSummary) -> None:
    session.summaries.append(summary)
    console.print(summary.message, markup=False, highlight=False, soft_wrap=True)
    for line in skipped_lines(summary):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _add_multi_file_notes(exc: Exception, summaries: list[BatchSummary], files: list[str]) -> None:
    """After a failed file of a multi-file load: which files were done before it (they stay loaded) and
    which were not tried (print_error prints the notes under the error line)."""
    if summaries:
        done = ", ".join(s.source_file.rsplit("/", 1)[-1] for s in summaries)
        exc.add_note(f"done before this error, kept ({len(summaries)}): {done}")
    if files:
        exc.add_note(f"not tried after this error ({len(files)}): {' '.join(files)}")


def _finite(_ctx: click.Context, _param: click.Parameter, value: float) -> float:
    if not math.isfinite(value):
        raise click.BadParameter(f"{value!r} is not a finite number")
    return value


files_argument = click.argument("files", nargs=-1, required=True, metavar="FILE...")
replace_option = click.option("--replace", is_flag=True, help="Reload a file that is already loaded.")
skip_bad_option = click.option(
    "--skip-bad", is_flag=True, help="Skip and count bad lines instead of failing the file."
)


@click.group(
    context_settings=CONTEXT,
    help="Load corpora, type tables and type maps into the raw schema; list, remove and summarise what is "
    "loaded. Bad input ends with exit code 2 and one line `error: FILE:LINE: problem`.",
)
@version_option
@database_url_option
@engine_option
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option(
    "--summary-json",
    type=click.Path(dir_okay=False),
    help="Also write the load batches' summaries as JSON to this file.",
)
@click.pass_context
def cli(ctx: click.Context, quiet: bool, summary_json: str | None, **target_flags: str | None) -> None:
    # --database-url and --engine given here are the command's: it builds the one Target from them
    # (_target_command reads them from this context's params)
    ctx.obj = Session(quiet, summary_json)


@cli.command(help="Extract paths from corpus files and load them (one batch per file).")
@click.option(
    "--format",
    "fmt",
    required=True,
    type=SuggestingChoice(sorted(FORMATS), FORMAT_ALIASES),
    help="Corpus format.",
)
@click.option(
    "--corpus",
    "corpus",
    metavar="NAME",
    help="The corpus the files belong to (default: each file's stem, news.jsonl -> news); the dbt var "
    "`corpora` builds the graph from some corpora only.",
)
@replace_option
@skip_bad_option
@click.option(
    "--processes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Processes that parse and extract.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Read at most N documents per file.")
@click.option("--ner-types", is_flag=True, help="Type linked mentions with spaCy NER labels.")
@click.option(
    "--ner-mentions",
    is_flag=True,
    help="Also add spaCy NER entities of the same sentences (id = normalised name).",
)
@click.option(
    "--on-duplicate",
    type=click.Choice(ON_DUPLICATE),
    default="error",
    show_default=True,
    help="A document id already used in the corpus (this file or a loaded one): refuse the file, naming "
    "both documents (error), or keep the first and skip the later one (skip).",
)
@click.option(
    "--alignment",
    type=click.Choice(ALIGNMENTS),
    help="Mention offsets that cut through a token (spaCy's char_span alignment_mode): an error (strict, "
    "the default of jsonl), widened to the whole tokens (expand, the default of the formats whose mentions "
    "are found by string matching) or narrowed to the whole tokens inside (contract).",
)
@click.option(
    "--spacy-model",
    metavar="NAME",
    help=f"The spaCy pipeline that parses: an installed package or a saved pipeline's folder, with a "
    f"parser, tagger and lemmatizer (default: {MODEL}); recorded with the batch.",
)
@click.option("--docs-dir", help="facc1: folder with the document texts (default: the TSV's folder).")
@click.option(
    "--min-posterior", type=float, default=0.0, callback=_finite, help="facc1: minimum entity posterior."
)
@files_argument
@_target_command
@click.pass_obj
def corpus(
    session: Session,
    target: Target,
    fmt: str,
    corpus: str | None,
    replace: bool,
    skip_bad: bool,
    processes: int,
    limit: int | None,
    ner_types: bool,
    ner_mentions: bool,
    on_duplicate: str,
    alignment: str | None,
    spacy_model: str | None,
    docs_dir: str | None,
    min_posterior: float,
    files: tuple[str, ...],
) -> None:
    options = {"docs_dir": docs_dir, "min_posterior": min_posterior} if fmt == "facc1" else {}
    _load_files(
        session,
        files,
        lambda file, progress: loading.load_corpus(
            target,
            file,
            fmt,
            corpus=corpus,
            replace=replace,
            skip_bad=skip_bad,
            processes=processes,
            ner_types=ner_types,
            ner_mentions=ner_mentions,
            limit=limit,
            reader_options=options,
            progress=progress,
            on_duplicate=on_duplicate,
            alignment=alignment,
            spacy_model=spacy_model,
        ),
    )


@cli.command(help="Load entity-type tables (entity -> type; global: they type the entities of every corpus).")
@click.option(
    "--format", "fmt", required=True, type=SuggestingChoice(TYPE_FORMATS), help="Type-table format."
)
@click.option(
    "--type-source",
    metavar="S",
    help="The type_source stored with the types (the dbt var `type_sources` selects by it), e.g. "
    "freebase, wikidata; default: the format's own ("
    + ", ".join(f"{fmt}: {source}" for fmt, source in DEFAULT_SOURCE.items())
    + ").",
)
@replace_option
@skip_bad_option
@files_argument
@_target_command
@click.pass_obj
def types(
    session: Session,
    target: Target,
    fmt: str,
    type_source: str | None,
    replace: bool,
    skip_bad: bool,
    files: tuple[str, ...],
) -> None:
    _load_files(
        session,
        files,
        lambda file, _progress: loading.load_types(
            target, file, fmt, replace=replace, skip_bad=skip_bad, type_source=type_source
        ),
    )


@cli.command("type-map", help="Load a Freebase -> FIGER type map (FIGER's types.map).")
@replace_option
@skip_bad_option
@files_argument
@_target_command
@click.pass_obj
def type_map(session: Session, target: Target, replace: bool, skip_bad: bool, files: tuple[str, ...]) -> None:
    _load_files(
        session,
        files,
        lambda file, _progress: loading.load_type_map(target, file, replace=replace, skip_bad=skip_bad),
    )


@cli.command(help="Extract the shared real corpora with the shared type tables.")
@click.option("--processes", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--limit", type=click.IntRange(min=1), help="Read at most N documents per file (quick runs).")
@click.option(
    "--ner-mentions", is_flag=True, help="Also add spaCy NER entities co-occurring in the sentences."
)
@click.option("--no-ner-types", is_flag=True, help="Do not type QID entities with NER labels.")
@click.option(
    "--only",
    default="fewrel,trex,google_re,grec",
    show_default=True,
    help="Comma-separated corpus groups; each is loaded as the corpus of that name.",
)
@replace_option
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Also write the summary as JSON.")
@_target_command
@click.pass_obj
def real(
    session: Session,
    target: Target,
    processes: int,
    limit: int | None,
    ner_mentions: bool,
    no_ner_types: bool,
    only: str,
    replace: bool,
    json_file: str | None,
) -> None:
    _postgres_only(target, "real")
    groups = tuple(g.strip() for g in only.split(",") if g.strip())
    unknown = sorted(set(groups) - set(CORPUS_GROUPS))
    if unknown or not groups:
        raise click.BadParameter(
            f"unknown corpus group(s) {unknown}; choose from {', '.join(CORPUS_GROUPS)}", param_hint="--only"
        )
    progress = _progress_factory(not session.quiet)

    def on_batch(summary: BatchSummary) -> None:
        progress("")  # closes the file's bar
        _done(session, summary)

    try:
        result = run_real(
            target,
            processes=processes,
            limit=limit,
            ner_types=not no_ner_types,
            ner_mentions=ner_mentions,
            replace=replace,
            only=groups,
            on_batch=on_batch,
            progress_factory=progress,
        )
    except USER_ERRORS as exc:
        _add_multi_file_notes(exc, session.summaries, [])
        raise
    finally:
        progress("")  # no bar left on the line of an error
    print_table(out, batch_table(session.summaries))
    for table in summary_tables(result):
        print_table(out, table)
    if json_file:
        with open(json_file, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2, default=str)


@cli.command("batches", help="List the load batches: corpus, file, sha256, counts, status, times.")
@click.option("--corpus", metavar="NAME", help="Only the batches of this corpus.")
@click.option("--kind", type=click.Choice(BATCH_KINDS), help="Only batches of this kind.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@_target_command
def list_batches(target: Target, corpus: str | None, kind: str | None, as_json: bool) -> None:
    with open_batch_store(target) as store:
        rows = store.batches(corpus=corpus, kind=kind)
    if as_json:
        print(json.dumps(rows, indent=2, default=str))
        return
    print_table(out, listing_table(rows))
    if not rows:
        console.print("no batches" + (f" of corpus {corpus!r}" if corpus else ""), markup=False)
    for row in rows:
        if row["status"] == "failed" and row["error"]:
            console.print(f"batch {row['batch_id']} failed: {row['error']}", markup=False, soft_wrap=True)
        elif row["n_bad_lines"]:
            lines = folded_lines(row["bad_line_numbers"] or [])
            console.print(
                f"batch {row['batch_id']} skipped {row['n_bad_lines']:,} bad record(s)"
                + (f" at line(s) {lines}" if lines else ""),
                markup=False,
                soft_wrap=True,
            )


@cli.command(
    help="Remove batches and all their rows, in one transaction (by id and/or every batch of a corpus)."
)
@click.argument("batch_ids", nargs=-1, type=int, metavar="[BATCH_ID]...")
@click.option(
    "--corpus", "corpora", multiple=True, metavar="NAME", help="Every batch of this corpus (repeatable)."
)
@click.option(
    "--missing-ok",
    is_flag=True,
    help="An unknown batch id or corpus is reported, not an error (scripts that may run twice).",
)
@_target_command
def remove(
    target: Target,
    batch_ids: tuple[int, ...],
    corpora: tuple[str, ...],
    missing_ok: bool,
) -> None:
    if not batch_ids and not corpora:
        raise click.UsageError("name the batches to remove: BATCH_ID... and/or --corpus NAME")
    with open_batch_store(target) as store:
        removed = store.remove(batch_ids=batch_ids, corpora=corpora, missing_ok=missing_ok)
    console.print(removal_message(removed), markup=False, highlight=False, soft_wrap=True)


def removal_message(removed: RemovedBatches) -> str:
    """One line: what was removed, the rows per table, what was not found, and what to run next."""
    if not removed.batches:
        return f"nothing removed: not found: {', '.join(removed.not_found)}"
    listed = ", ".join(
        f"{row['batch_id']} ({row['corpus_name'] + ': ' if row['corpus_name'] else ''}"
        f"{row['source_file'].rsplit('/', 1)[-1]})"
        for row in removed.batches
    )
    rows = ", ".join(f"{table} {n:,}" for table, n in sorted(removed.rows.items())) or "no rows"
    message = f"removed {len(removed.batches)} batch(es): {listed}; rows deleted: {rows}"
    if removed.not_found:
        message += f"; not found: {', '.join(removed.not_found)}"
    return message + (
        "; the marts keep the old graph until the next build (make dbt-run), except the view "
        "relation_instances, which shows only the sentences still loaded"
    )


@cli.command(help="Counts per table, rejections per rule, typed-entity share.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@_target_command
def summary(target: Target, as_json: bool) -> None:
    _postgres_only(target, "summary")
    result = database_summary(target)
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        for table in summary_tables(result):
            print_table(out, table)


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="sherliic-extract", signals=True)


if __name__ == "__main__":
    sys.exit(main())
