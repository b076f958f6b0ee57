"""`sherliic-demo` (`make demo`): the project's main job on a fresh machine, end to end.

1. start the embedded Postgres (or use DATABASE_URL) and create the raw schema;
2. generate the synthetic demo corpus (:mod:`demo.generator`) into ``out/demo/`` (corpus.jsonl, types.tsv);
3. load the type table and the corpus (spaCy parse, dependency paths, Appendix-A filters, COPY);
4. ``dbt build``: staging → intermediate → marts (TEG, InfCands) plus data tests and unit tests;
5. print what came out, and how many of the planted entailments are among the inference candidates.

Needs nothing outside the checkout (no ../shared/data). :func:`run_demo` is the same job as a
function (the Target and the corpus size as arguments) for the end-to-end test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from builds.runner import run_dbt
from demo import generator
from demo.relations import PLANTED_RULES, PlantedRule, noise_paths, related_paths
from extract.loading import load_corpus, load_types
from warehouse.command_line import CONTEXT, OUTPUT_FOLDER, run, target_options, version_option
from warehouse.errors import DatabaseUnavailable
from warehouse.settings import out_folder
from warehouse.target import ENGINES, Marts, Target
from warehouse.terminal import print_table

DEMO_CORPUS = "demo"  # the corpus name of the demo's batch (the dbt var `corpora` selects it)


@dataclass(frozen=True)
class PlantedResult:
    """The best inference candidate found for a planted rule (None fields: missed)."""

    rule: PlantedRule
    relv: float | None = None
    sigma: float | None = None
    esr: float | None = None
    rank: int | None = None
    premise_types: str = ""
    hypothesis_types: str = ""
    n_typed_variants: int = 0  # InfCands of this path pair (different typings)

    @property
    def found(self) -> bool:
        return self.relv is not None


@dataclass
class DemoSummary:
    target: Target  # the warehouse the demo built
    corpus_path: Path
    types_path: Path
    size: int
    seed: int
    n_generated_sentences: int = 0
    n_documents: int = 0
    n_sentences: int = 0
    n_mentions: int = 0
    n_instances: int = 0
    rejections: dict[str, int] = field(default_factory=dict)
    n_entities: int = 0
    n_relations: int = 0
    n_typed_relations: int = 0
    n_candidates: int = 0
    planted: list[PlantedResult] = field(default_factory=list)
    # InfCands by kind of path pair: planted / reverse of planted / same family / noise / unrelated
    candidate_kinds: dict[str, int] = field(default_factory=dict)
    other_corpus_batches: int = 0
    # (rule name, premise sentence, hypothesis sentence) sharing an entity pair: why a rule is a candidate
    evidence: list[tuple[str, str, str]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def engine(self) -> str:
        return self.target.engine

    @property
    def recall(self) -> float:
        return sum(p.found for p in self.planted) / len(self.planted) if self.planted else 0.0


class DemoError(RuntimeError):
    """A step of the demo failed; the message says which and why."""


def _step(console: Console, timings: dict[str, float], name: str, label: str, fn: Callable, *args, **kwargs):
    """Run one step with a visible start/end line and its duration; wrap failures in DemoError."""
    console.print(f"[bold cyan]→[/] {label} …")
    start = time.perf_counter()
    try:
        result = fn(*args, **kwargs)
    except (DemoError, DatabaseUnavailable):
        raise
    except Exception as exc:  # any failure: name the step, keep the cause
        raise DemoError(f"step '{label}' failed: {exc}") from exc
    timings[name] = time.perf_counter() - start
    console.print(f"[green]✓[/] {label} [dim]({timings[name]:.1f} s)[/]")
    return result


def classify_candidate(premise_path: str, hypothesis_path: str, alignment: str) -> str:
    """Kind of an InfCand's path pair relative to what the generator planted."""
    planted = {(r.premise_path, r.hypothesis_path, r.alignment) for r in PLANTED_RULES}
    reverse = {(r.hypothesis_path, r.premise_path, r.alignment) for r in PLANTED_RULES}
    key = (premise_path, hypothesis_path, alignment)
    if key in planted:
        return "planted"
    if key in reverse:
        return "reverse of planted"
    noise = noise_paths()
    if premise_path in noise or hypothesis_path in noise:
        return "noise relation"
    family = related_paths()
    if premise_path in family and family.get(premise_path) == family.get(hypothesis_path):
        return "same planted family"
    return "unrelated"


def collect_summary(summary: DemoSummary, corpus_batch: int | None) -> None:
    """Fill the counts from the raw tables (this corpus batch) and the dbt marts, on either engine."""
    with summary.target.marts() as marts:
        if corpus_batch is not None:
            row = marts.one(
                "select n_documents, n_sentences, n_mentions, n_instances from raw.load_batches "
                "where batch_id = %s",
                (corpus_batch,),
            )
            summary.n_documents, summary.n_sentences, summary.n_mentions, summary.n_instances = row
            summary.rejections = dict(
                marts.rows(
                    "select rule, n_paths from raw.path_rejections where batch_id = %s "
                    "order by n_paths desc, rule",
                    (corpus_batch,),
                )
            )
            summary.other_corpus_batches = marts.one(
                "select count(*) from raw.load_batches where kind = 'corpus' and status = 'loaded' "
                "and batch_id <> %s",
                (corpus_batch,),
            )[0]
        for attr, table in (
            ("n_entities", "entities"),
            ("n_relations", "relations"),
            ("n_typed_relations", "typed_relations"),
            ("n_candidates", "inference_candidates"),
        ):
            setattr(summary, attr, marts.one(f"select count(*) from {marts.schema}.{table}")[0])
        kinds: dict[str, int] = {}
        for premise_path, hypothesis_path, alignment, n in marts.rows(
            "select premise_path, hypothesis_path, alignment, count(*) "
            f"from {marts.schema}.inference_candidates group by 1, 2, 3"
        ):
            kind = classify_candidate(premise_path, hypothesis_path, alignment)
            kinds[kind] = kinds.get(kind, 0) + n
        summary.candidate_kinds = kinds
        summary.planted = []
        for rule in PLANTED_RULES:
            rows = marts.rows(
                f"""
                select relv, sigma, esr, rank_for_hypothesis,
                       premise_type_a || ', ' || premise_type_b,
                       hypothesis_type_a || ', ' || hypothesis_type_b
                from {marts.schema}.inference_candidates
                where premise_path = %s and hypothesis_path = %s and alignment = %s
                order by score desc, premise_typed_rel_id, hypothesis_typed_rel_id
                """,
                (rule.premise_path, rule.hypothesis_path, rule.alignment),
            )
            if rows:
                relv, sigma, esr, rank, p_types, h_types = rows[0]
                summary.planted.append(
                    PlantedResult(
                        rule, float(relv), float(sigma), float(esr), int(rank), p_types, h_types, len(rows)
                    )
                )
            else:
                summary.planted.append(PlantedResult(rule))
        summary.evidence = _evidence(marts, summary.planted, corpus_batch) if corpus_batch is not None else []


def _evidence(marts: Marts, planted: list[PlantedResult], batch: int) -> list[tuple[str, str, str]]:
    """For the first found straight and crossed planted rule: a premise and a hypothesis sentence about
    the same entity pair (the provenance a user would query)."""
    out = []
    for alignment in ("straight", "crossed"):
        found = [p.rule for p in planted if p.found and p.rule.alignment == alignment]
        if not found:
            continue
        rule = found[0]
        params = (rule.premise_path, batch, rule.hypothesis_path, batch)
        rows = marts.rows(_EVIDENCE_SQL[alignment], params)
        if rows:
            out.append((rule.name, rows[0][0], rows[0][1]))
    return out


_EVIDENCE_TEMPLATE = """
with

instances as (
    select i.path, i.arg1_entity_id, i.arg2_entity_id, s.text, i.batch_id
    from raw.relation_instances as i
    join raw.sentences as s on s.sentence_id = i.sentence_id
),

premise as (select * from instances where path = %s and batch_id = %s),

hypothesis as (select * from instances where path = %s and batch_id = %s)

select premise.text, hypothesis.text
from premise
join hypothesis on {join}
order by premise.text, hypothesis.text
limit 1
"""
_EVIDENCE_SQL = {
    "straight": _EVIDENCE_TEMPLATE.format(
        join="hypothesis.arg1_entity_id = premise.arg1_entity_id "
        "and hypothesis.arg2_entity_id = premise.arg2_entity_id"
    ),
    "crossed": _EVIDENCE_TEMPLATE.format(
        join="hypothesis.arg1_entity_id = premise.arg2_entity_id "
        "and hypothesis.arg2_entity_id = premise.arg1_entity_id"
    ),
}


def run_demo(
    target: Target,
    size: int = generator.DEFAULT_SIZE,
    seed: int = generator.DEFAULT_SEED,
    out_dir: Path | str | None = None,
    processes: int = 2,
    console: Console | None = None,
    dbt_verbose: bool = False,
) -> DemoSummary:
    """The whole demo job on the Target's warehouse: a Postgres database or the Spark catalog."""
    if size < generator.MIN_SIZE:  # before touching any database
        raise ValueError(f"--size must be at least {generator.MIN_SIZE} (got {size})")
    console = console or Console()
    timings: dict[str, float] = {}
    start = time.perf_counter()
    if target.engine == "postgres":
        _step(
            console, timings, "database", "start the database and create the raw schema", _prepare_db, target
        )
    out_dir = Path(out_dir) if out_dir is not None else out_folder() / "demo"
    corpus_path, types_path, corpus = _step(
        console,
        timings,
        "generate",
        f"generate the demo corpus (size {size}, seed {seed}) into {out_dir}",
        generator.write_corpus,
        out_dir,
        size,
        seed,
    )
    console.print(
        f"  {len(corpus.documents)} documents, {corpus.n_sentences} sentences, {corpus.n_entities} entities, "
        f"{len(corpus.type_rows)} type rows, {len(PLANTED_RULES)} planted rules"
    )
    if target.engine == "spark":
        corpus_batch = _load_on_spark(console, timings, target, corpus_path, types_path)
    else:
        corpus_batch = _load_on_postgres(console, timings, target, corpus_path, types_path, processes, corpus)
    dbt_args = ["build"] if dbt_verbose else ["--quiet", "build"]
    with console.status("dbt build: staging → intermediate → marts, data tests, unit tests"):
        _step(
            console,
            timings,
            "dbt_build",
            f"dbt build on {target.engine} (models, data tests, unit tests)",
            run_dbt,
            target,
            dbt_args,
            dbt_vars={"corpora": [DEMO_CORPUS]},  # the demo's graph, whatever else is loaded
        )
    summary = DemoSummary(target, corpus_path, types_path, size, seed, corpus.n_sentences)
    _step(console, timings, "summary", "read the marts", collect_summary, summary, corpus_batch)
    timings["total"] = time.perf_counter() - start
    summary.timings = timings
    return summary


def _load_on_postgres(
    console: Console,
    timings: dict[str, float],
    target: Target,
    corpus_path: Path,
    types_path: Path,
    processes: int,
    corpus: generator.DemoCorpus,
) -> int | None:
    _step(
        console,
        timings,
        "load_types",
        "load the entity types (types.tsv)",
        load_types,
        target,
        types_path,
        "tsv",
        replace=True,
        type_source="demo",
    )
    with Progress(
        TextColumn("  parsing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("documents"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("parse", total=len(corpus.documents))
        loaded = _step(
            console,
            timings,
            "load_corpus",
            f"parse and load the corpus (spaCy, dependency paths, Appendix-A filters; {processes} processes)",
            load_corpus,
            target,
            corpus_path,
            "jsonl",
            corpus=DEMO_CORPUS,
            replace=True,
            processes=processes,
            progress=lambda n: bar.advance(task, n),
        )
    return loaded.batch_id


def _load_on_spark(
    console: Console, timings: dict[str, float], target: Target, corpus_path: Path, types_path: Path
) -> int | None:
    """The types and the corpus loaded by `sherliic-extract` on Spark (distributed extraction) in one
    child process: its JVM, and with it the one-process metastore, is gone before dbt starts."""
    summaries = _step(
        console,
        timings,
        "load",
        "load the entity types and the corpus on Spark (distributed extraction: spaCy in Spark's "
        "Python workers)",
        _spark_extract,
        target,
        [
            ["types", "--format", "tsv", "--type-source", "demo", "--replace", str(types_path)],
            ["corpus", "--format", "jsonl", "--corpus", DEMO_CORPUS, "--replace", str(corpus_path)],
        ],
    )
    return summaries[-1]["batch_id"]


def _spark_extract(target: Target, commands: list[list[str]]) -> list[dict]:
    """Run `sherliic-extract` commands on the Target (Spark), one child process each; the batch
    summaries of all of them."""
    summaries = []
    with tempfile.TemporaryDirectory() as folder:
        for i, command in enumerate(commands):
            path = Path(folder) / f"summary{i}.json"
            argv = [sys.executable, "-m", "extract.cli", "--quiet", "--summary-json", str(path), *command]
            completed = subprocess.run(
                argv, env=target.environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            if completed.returncode != 0:
                errors = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
                raise DemoError(errors[-1] if errors else completed.stderr.strip()[-2000:])
            summaries.extend(json.loads(path.read_text()))
    return summaries


def _prepare_db(target: Target) -> None:
    """Start the embedded server if it is the Target's and it is not running; create the raw schema."""
    target.ensure_schema()


def print_summary(summary: DemoSummary, console: Console) -> None:
    counts = Table(title="What the demo built", show_header=False, title_justify="left")
    counts.add_column("what")
    counts.add_column("count", justify="right")
    counts.add_row("documents", f"{summary.n_documents:,}")
    counts.add_row("sentences generated", f"{summary.n_generated_sentences:,}")
    counts.add_row("sentences with a kept path (stored)", f"{summary.n_sentences:,}")
    counts.add_row("entity mentions", f"{summary.n_mentions:,}")
    counts.add_row("relation instances (kept paths)", f"{summary.n_instances:,}")
    for rule, n in summary.rejections.items():
        counts.add_row(f"  paths rejected: {rule}", f"{n:,}")
    counts.add_row("entities |E|", f"{summary.n_entities:,}")
    counts.add_row("relations (canonical paths)", f"{summary.n_relations:,}")
    counts.add_row("typed relations (TEG nodes)", f"{summary.n_typed_relations:,}")
    counts.add_row("inference candidates (InfCands)", f"{summary.n_candidates:,}")
    for kind in ("planted", "reverse of planted", "same planted family", "unrelated", "noise relation"):
        if kind in summary.candidate_kinds:
            counts.add_row(f"  InfCands: {kind}", f"{summary.candidate_kinds[kind]:,}")
    print_table(console, counts)

    planted = Table(title="Planted entailments among the InfCands (best typing)", title_justify="left")
    for col, justify in (
        ("rule", "left"),
        ("premise ⇒ hypothesis path", "left"),
        ("align", "left"),
        ("Relv", "right"),
        ("σ", "right"),
        ("esr", "right"),
        ("rank", "right"),
        ("typings", "right"),
    ):
        planted.add_column(col, justify=justify)
    for p in summary.planted:
        paths = f"{p.rule.premise_path}\n⇒ {p.rule.hypothesis_path}"
        if p.found:
            planted.add_row(
                p.rule.name,
                paths,
                p.rule.alignment,
                f"{p.relv:,.0f}",
                f"{p.sigma:,.1f}",
                f"{p.esr:.2f}",
                str(p.rank),
                str(p.n_typed_variants),
            )
        else:
            planted.add_row(p.rule.name, paths, p.rule.alignment, "[red]missed[/]", "", "", "", "0")
    print_table(console, planted)
    found = sum(p.found for p in summary.planted)
    console.print(
        f"[bold]Planted-rule recall: {found}/{len(summary.planted)} = {summary.recall:.0%}[/] "
        "at the paper's thresholds (k=5, r_min=5, Relv ≥ 1000, σ ≥ 15, esr ≥ 0.6)"
    )
    for name, premise, hypothesis in summary.evidence:
        console.print(f"Evidence for [bold]{name}[/]: “{premise}” / “{hypothesis}”")
    if summary.other_corpus_batches:
        console.print(
            f"[yellow]note:[/] the database also holds {summary.other_corpus_batches} other corpus "
            "batch(es); "
            "the marts combine all loaded batches"
        )
    steps = ", ".join(f"{k} {v:.1f} s" for k, v in summary.timings.items() if k != "total")
    console.print(f"Time: {summary.timings.get('total', 0):.1f} s ({steps})")
    console.print(f"Database: {summary.target.describe()}")
    query = (
        "select premise_path, hypothesis_path, alignment, relv, sigma, esr "
        "from warehouse.inference_candidates order by score desc limit 20"
    )
    if summary.engine == "spark":
        console.print(
            "Explore it (SHERLIIC_ENGINE=spark): [italic]from warehouse import read_sql; "
            f'print(read_sql("{query}", engine="spark"))[/]',
            markup=True,
        )
    else:
        console.print(f"Explore it: [bold]make psql[/], then e.g. [italic]{query};[/]")
    console.print(f"Demo corpus: {summary.corpus_path} and {summary.types_path}")


@click.command(context_settings=CONTEXT)
@version_option
@click.option(
    "--size",
    type=int,
    default=generator.DEFAULT_SIZE,
    show_default=True,
    help="Facts per planted premise relation.",
)
@click.option("--seed", type=int, default=generator.DEFAULT_SEED, show_default=True, help="Generator seed.")
@click.option("--processes", type=int, default=2, show_default=True, help="spaCy processes.")
@click.option("--out", type=OUTPUT_FOLDER, default=None, help="Output folder (default out/demo).")
@click.option("--dbt-verbose", is_flag=True, help="Show dbt's own log lines.")
@target_options(engines=ENGINES)
def cli(
    size: int,
    seed: int,
    processes: int,
    out: Path | None,
    dbt_verbose: bool,
    target: Target,
) -> int:
    """The project's main job on a fresh machine (`make demo`): generate the demo corpus, extract and
    load it, dbt build the TEG and the inference candidates, summarise.

    Needs nothing outside the checkout. Exit code 1 when a step fails or no candidate is built."""
    console = Console()
    try:
        summary = run_demo(
            target,
            size=size,
            seed=seed,
            out_dir=out,
            processes=processes,
            console=console,
            dbt_verbose=dbt_verbose,
        )
    except DatabaseUnavailable:
        raise  # one `error:` line, exit 2 (warehouse.command_line.run)
    except (DemoError, ValueError, RuntimeError) as exc:
        console.print(f"[bold red]demo failed:[/] {escape(str(exc))}")
        return 1
    print_summary(summary, console)
    if not summary.n_candidates:
        console.print("[bold red]demo failed:[/] no inference candidates were built")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="sherliic-demo")


if __name__ == "__main__":
    sys.exit(main())
