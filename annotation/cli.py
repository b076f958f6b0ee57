"""`sherliic-annotate`: sample InfCands, export/import annotation batches, serve the local annotation
page, aggregate judgements into gold labels and export the SherLIiC dev/test CSVs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from warehouse.command_line import (
    CONTEXT,
    OUTPUT_FILE,
    OUTPUT_FOLDER,
    json_object,
    run,
    target_options,
    version_option,
)
from warehouse.settings import out_folder, require_shared_data
from warehouse.target import Target

TASKS = click.Choice(["sherliic", "zeichner"])


def annotation_out() -> Path:
    return out_folder() / "annotation"


def _task_option(help_text: str = "Annotation task."):
    return click.option("--task", default="sherliic", show_default=True, type=TASKS, help=help_text)


@click.group(context_settings=CONTEXT)
@version_option
def cli() -> None:
    """Sample InfCands, export/import annotation batches, serve the local annotation page, aggregate
    judgements into gold labels and export the SherLIiC dev/test CSVs.

    \b
    A round:
      sherliic-annotate sample --batch b1 --premises 50
      sherliic-annotate serve                       (or a crowdsourcing site with out/annotation/b1.csv)
      sherliic-annotate import results.csv          (judgements from a crowdsourcing site)
      sherliic-annotate aggregate
      sherliic-annotate export-dataset
    """


@cli.command()
@click.option(
    "--batch", required=True, help="Batch name (unique; letters, digits, '-', '_', '.'; names its CSV)."
)
@click.option("--premises", type=int, default=50, show_default=True, help="Number of premise facts.")
@click.option("--hypotheses", type=int, default=3, show_default=True, help="Hypotheses per premise.")
@click.option("--seed", type=int, default=0, show_default=True, help="Sampling seed.")
@click.option(
    "--stratify-by",
    default="none",
    show_default=True,
    type=click.Choice(["none", "alignment", "score_quartile", "hypothesis_rank"]),
    help="Strata drawn round-robin.",
)
@_task_option()
@click.option("--out", type=OUTPUT_FILE, help="CSV path (default out/annotation/<batch>.csv).")
@target_options(build=True)
def sample(
    batch: str,
    premises: int,
    hypotheses: int,
    seed: int,
    stratify_by: str,
    task: str,
    out: Path | None,
    target: Target,
) -> None:
    """Sample InfCands of a build into a batch; write its CSV.

    The crowdsourcing CSV has one row per premise with its candidate hypotheses; the batch records the
    build its candidates came from (--build, default the default build)."""
    from annotation.sampling import export_batch_csv, sample_batch

    summary = sample_batch(
        target,
        batch,
        premises,
        hypotheses_per_premise=hypotheses,
        seed=seed,
        stratify_by=stratify_by,
        task=task,
    )
    out = out or annotation_out() / f"{batch}.csv"
    n_rows = export_batch_csv(target, batch, out) if summary.n_items else 0
    print(
        f"batch {summary.batch_name} (build {summary.build}): {summary.n_premises} premises, "
        f"{summary.n_items} items; crowdsourcing CSV ({n_rows} rows): {out}"
    )


@cli.command()
@click.option("--batch", required=True, help="Batch name.")
@click.option("--out", type=OUTPUT_FILE, help="CSV path (default out/annotation/<batch>.csv).")
@target_options()
def export(batch: str, out: Path | None, target: Target) -> None:
    """Write a batch's crowdsourcing CSV again."""
    from annotation.sampling import export_batch_csv

    out = out or annotation_out() / f"{batch}.csv"
    n_rows = export_batch_csv(target, batch, out)
    print(f"wrote {n_rows} premise rows to {out}")


@cli.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@_task_option()
@target_options()
def import_command(file: Path, task: str, target: Target) -> None:
    """Import a results CSV of judgements.

    Columns: item_id, worker_id, answer[, the meaningful flags]."""
    from annotation.results import import_results

    n = import_results(target, file, task=task)
    print(f"imported {n} new judgements from {file}")


@cli.command()
@click.option("--port", type=int, default=8765, show_default=True, help="Port on 127.0.0.1.")
@click.option(
    "--target",
    "judgements_per_item",
    type=int,
    default=5,
    show_default=True,
    help="Judgements wanted per item.",
)
@_task_option("Task shown in the printed link.")
@target_options()
def serve(port: int, judgements_per_item: int, task: str, target: Target) -> None:
    """Serve the annotation page on 127.0.0.1.

    Ctrl-C stops it."""
    from annotation.server import AnnotationStore, make_server, nothing_sampled

    server = make_server(target, port=port, judgements_per_item=judgements_per_item)
    host, port = server.server_address[:2]
    print(f"annotation page: http://{host}:{port}/?task={task} (Ctrl-C stops)", flush=True)
    if not AnnotationStore(target).sampled_batches(task):
        print(f"note: {nothing_sampled(task)}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@cli.command()
@_task_option()
@click.option(
    "--vars",
    "dbt_vars",
    callback=json_object,
    metavar="JSON",
    help="dbt vars as JSON, e.g. '{\"annotation_min_trust\": 0.8}'.",
)
@target_options()
def aggregate(task: str, dbt_vars: dict | None, target: Target) -> None:
    """Build the gold labels; print Table 2.

    A dbt build of the annotation marts (trust, gold labels, split), then the Table 2 statistics."""
    from annotation.dataset import aggregate, statistics

    aggregate(target, dbt_vars=dbt_vars)
    for row in statistics(target, task):
        print(f"{row['split']:>5}  {row['statistic']:<28} {row['value']:g}")


@cli.command("export-dataset")
@_task_option()
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    help="Folder (default out/annotation/<task>_dataset).",
)
@target_options()
def export_dataset(task: str, out: Path | None, target: Target) -> None:
    """Write the gold items as dev/test CSVs.

    SherLIiC's release layout: dev.csv and test.csv, 22 columns."""
    from annotation.dataset import export_dataset

    out = out or annotation_out() / f"{task}_dataset"
    counts = export_dataset(target, out, task=task)
    print(f"wrote dev.csv ({counts['dev']} items) and test.csv ({counts['test']} items) to {out}")


@cli.command()
@click.argument("path")
@click.argument("type_a", required=False)
@click.argument("type_b", required=False)
def render(path: str, type_a: str | None, type_b: str | None) -> None:
    """Render a path as an English sentence.

    TYPE_A and TYPE_B (optional) name the arguments' types."""
    from deppath.render import render_relation

    print(render_relation(path, type_a, type_b).text)


@cli.command("check-templates")
@click.option(
    "--dev",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Path of sherliic/dev.tsv (default: the shared data folder).",
)
def check_templates(dev: Path | None) -> None:
    """Renderer vs SherLIiC-dev's templates.

    The exact-match rate; the failures go to out/annotation/template_failures.tsv."""
    from annotation.template_check import aspect_lexicon_estimate, check_templates

    dev = dev or require_shared_data() / "sherliic" / "dev.tsv"
    result = check_templates(dev)
    print(
        f"exact match: {result.n_exact}/{result.n_templates} templates = {result.rate:.1%}; "
        f"items with both sides exact: {result.n_items_exact}/{result.n_items} = {result.item_rate:.1%}"
    )
    for klass, n in result.classes.most_common():
        print(f"  {n:4d}  {klass}")
    lexicon = aspect_lexicon_estimate(dev)
    n = lexicon.n_templates
    print(
        f"a per-predicate form lexicon fitted to these templates (at best): {lexicon.in_sample}/{n} = "
        f"{lexicon.in_sample / n:.1%} in sample, {lexicon.held_out}/{n} = {lexicon.held_out / n:.1%} on "
        "held-out items"
    )
    annotation_out().mkdir(parents=True, exist_ok=True)
    failures = annotation_out() / "template_failures.tsv"
    with failures.open("w", encoding="utf-8") as handle:
        handle.write("path\texpected\trendered\tclass\n")
        for row in result.failures:
            handle.write("\t".join(row) + "\n")
    print(f"failures: {failures}")


def main(argv: list[str] | None = None) -> int:
    # the library reports bad arguments (an existing batch name, a malformed path) as ValueError
    return run(cli, argv, prog_name="sherliic-annotate", user_errors=(ValueError,))


if __name__ == "__main__":
    sys.exit(main())
