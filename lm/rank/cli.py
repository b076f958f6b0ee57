"""`sherliic-lm rank` (`make rank`) and `sherliic-lm bench-rank` (`make bench-rank`); registered on the
`python -m lm.cli` group (= `sherliic-lm`).

    sherliic-lm rank [--build NAME] [--model minilm] [--patterns 'x, which means that y'] [--seeds 0]
                     [--dataset sherliic] [--cosine-share 0.75] [--backend torch|onnx-fp32|onnx-int8]
                     [--threads N] [--chunk-size N] [--no-train]
        scores every inference candidate of the build (--build / SHERLIIC_BUILD, else the default build)
        with the verifier (lm.verifier; default DEFAULT_VERIFIER, the one the selection picked), into
        results.verifier_scores (the dbt mart candidate_verifier_scores is a view over them), writes
        out/rank/<build>/<verifier key>-<backend>.png (verifier score vs esr) and .json (the summary).
        Resumable after a kill; a second run scores nothing. It only reads the build: no dbt run, no
        build record.
    sherliic-lm bench-rank [--models minilm,mpnet] [--threads 2]
        pairs/s per model and backend at 2 threads, and each backend's figures on the selection folds
        (tm_cv) with the default verifier's fold models -> out/bench/rank.json
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import click

from evaluation.datasets import load_benchmark, load_items
from evaluation.registry import ResourceMissing
from lm.command_options import MODEL, MODEL_HELP
from lm.models import LOCAL_PREFIX, MODELS, available_models
from lm.plan import LmSettings
from lm.rank import bench
from lm.rank.ranking import (
    DEFAULT_CHUNK,
    RankSettings,
    RankSummary,
    rank_candidates,
    require_candidates,
)
from lm.rank.report import plot_verifier_vs_esr, scored_candidates, spearman
from lm.rank.store import build_name
from lm.runs import RunSettings, run_folder
from lm.verifier import DEFAULT_VERIFIER, TrainedVerifier, Verifier, VerifierSpec, build_verifier
from warehouse.command_line import OUTPUT_FOLDER, target_options
from warehouse.errors import ConfigurationError
from warehouse.settings import out_folder, shared_data_dir
from warehouse.target import ENGINES, Target

BACKENDS = ("torch", "onnx-fp32", "onnx-int8")  # lm.inference.BACKENDS (which imports torch)
# The backend `make rank` uses per model: int8 where it loses at most 1 F1 point against fp32 on the
# predicate-disjoint folds (`make bench-rank`, docs/lm.md "Ranking the candidates"), else fp32 on ONNX
# Runtime. MiniLM's default verifier (the mix) lost 1.1 points on int8 (62.2 vs 63.3); mpnet has no fold
# models to judge it with.
DEFAULT_BACKEND = {"minilm": "onnx-fp32", "mpnet": "onnx-fp32"}
# Seconds of one training epoch per 796 pairs at 1 and 2 torch threads (`make bench-lm`, README
# Performance, 2 cores): what the notice before a first ranking's training estimates from.
EPOCH_SECONDS_PER_796 = {"minilm": {1: 32.4, 2: 19.8}, "mpnet": {1: 169.0, 2: 108.0}}


def training_notice(verifier: Verifier, settings: RunSettings) -> str | None:
    """One line saying what a ranking trains before it scores, why and about how long: the verifier's
    runs whose weights are not in the run cache (a first `make rank`); None when all are cached."""
    missing = [
        (recipe, training)
        for recipe, training in verifier.runs()
        if not (run_folder(recipe, training, settings) / "weights.safetensors").is_file()
    ]
    if not missing:
        return None
    per_epoch = EPOCH_SECONDS_PER_796.get(verifier.spec.model, EPOCH_SECONDS_PER_796["minilm"])
    threads = min(max(settings.threads, 1), 2)
    seconds = sum(
        recipe.epochs * len(training.labels) * len(recipe.patterns) * per_epoch[threads] / 796
        for recipe, training in missing
    )
    recipe, training = missing[0]
    runs = f"{len(missing)} run{'s' if len(missing) > 1 else ''}"
    return (
        f"no cached verifier weights in {settings.runs_dir}: training {verifier.name} first ({runs}, "
        f"{recipe.epochs} epochs on {len(training.labels):,} labelled pairs each), about "
        f"{max(1, round(seconds / 60))} min at {threads} torch thread(s) (LM_THREADS) on 2 quiet cores, "
        "longer under load; cached afterwards, later rankings only score"
    )


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


def verifier_items(target: Target, spec: VerifierSpec):
    """The loaded items the verifier trains on (SherLIiC loaded from the shared folder if need be)."""
    datasets = [spec.dataset, *spec.extra]
    if "sherliic" in datasets:
        sherliic_items(target)
    return load_items(target, datasets)


def chosen_spec(
    model: str | None,
    patterns: tuple[str, ...] | None,
    seeds: tuple[int, ...] | None,
    dataset: str | None,
    cosine_share: float | None,
) -> VerifierSpec:
    """DEFAULT_VERIFIER with what the command line gives instead."""
    given = {
        "model": model,
        "patterns": patterns,
        "seeds": seeds,
        "dataset": dataset,
        "cosine_share": cosine_share,
    }
    return replace(DEFAULT_VERIFIER, **{k: v for k, v in given.items() if v is not None})


def verifier_options(command):
    """--model, --patterns, --seeds, --dataset, --cosine-share: a VerifierSpec (default DEFAULT_VERIFIER)."""
    options = [
        click.option(
            "--model",
            type=MODEL,
            help=f"Encoder: {MODEL_HELP} Default: the default verifier's, {DEFAULT_VERIFIER.model}.",
        ),
        click.option(
            "--patterns",
            callback=_patterns,
            metavar="P[;P]",
            help="`;`-separated patterns, one run each (default: the default verifier's).",
        ),
        click.option(
            "--seeds", callback=_seeds, metavar="N[,N]", help="Seeds (default: the default verifier's)."
        ),
        click.option(
            "--dataset", help="The loaded benchmark whose labelled pool trains it (default: sherliic)."
        ),
        click.option(
            "--cosine-share",
            type=click.FloatRange(min=0, max=1, max_open=True),
            help=f"Share of the zero-shot cosine (default: {DEFAULT_VERIFIER.cosine_share:g}; 0: none).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.command("rank")
@verifier_options
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
    "--out",
    type=OUTPUT_FOLDER,
    default=out_folder,
    show_default="out",
    help="Output folder (SHERLIIC_OUT).",
)
@target_options(engines=ENGINES, build=True)
def rank_command(
    target: Target,
    model: str | None,
    patterns: tuple[str, ...] | None,
    seeds: tuple[int, ...] | None,
    dataset: str | None,
    cosine_share: float | None,
    backend: str | None,
    threads: int | None,
    batch_size: int,
    chunk_size: int,
    no_train: bool,
    plot: bool,
    out: Path,
) -> int:
    """Score every inference candidate of a build with a verifier (`make rank [BUILD=NAME]`).

    Only reads the build: no dbt run, no build record; the mart candidate_verifier_scores is a view over
    the scores."""
    with target.marts(read_only=True) as marts:  # before a verifier is trained for nothing
        require_candidates(marts)
    lm = LmSettings.from_environment()
    spec = chosen_spec(model, patterns, seeds, dataset, cosine_share)
    items = verifier_items(target, spec)
    untrained = None
    try:  # a student's teacher is trained while building it, its own runs by trained()
        untrained = build_verifier(spec, items, settings=lm.run, allow_compute=not no_train)
        notice = None if no_train else training_notice(untrained, lm.run)
        if notice:
            print(notice, flush=True)
        verifier = untrained.trained(settings=lm.run, allow_compute=not no_train)
    except ResourceMissing:  # --no-train, and a run the verifier needs is not in the run cache
        what = f"the verifier {untrained.name}" if untrained else f"the teacher of the {spec.model} student"
        raise ConfigurationError(
            f"--no-train: {what} is not trained yet (run cache {lm.run.runs_dir}); "
            "leave --no-train out to train and cache it first"
        ) from None
    settings = RankSettings(
        backend=backend or DEFAULT_BACKEND.get(spec.model, "onnx-fp32"),
        batch_size=batch_size,
        chunk_size=chunk_size,
        cache_dir=lm.run.cache_dir,
        **({"threads": threads} if threads else {}),
    )
    rank_build(target, verifier, settings, out=out, plot=plot)
    return 0


def rank_build(
    target: Target, verifier: TrainedVerifier, settings: RankSettings, *, out: Path, plot: bool = True
) -> RankSummary:
    """What `sherliic-lm rank` does once it has its verifier: score the build's candidates, print the
    summary line and, with `plot`, write out/rank/<build>/<verifier key>-<backend>.png and .json."""
    summary = rank_candidates(target, verifier, settings)
    print(summary.line())
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
    return summary


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
    help="Each backend's figures on the selection folds (tm_cv), with the verifier's fold models "
    "(those `sherliic-lm select` trained), for each model whose fold models are cached.",
)
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    default=out_folder,
    show_default="out",
    help="Output folder (SHERLIIC_OUT).",
)
@verifier_options
@target_options()
def bench_rank_command(
    target: Target,
    models: str,
    threads: int,
    batch_size: int,
    quality: bool,
    out: Path,
    model: str | None,
    patterns: tuple[str, ...] | None,
    seeds: tuple[int, ...] | None,
    dataset: str | None,
    cosine_share: float | None,
) -> int:
    """Pairs/s per model and backend, each backend on the folds -> out/bench/rank.json (`make bench-rank`)."""
    lm = LmSettings.from_environment()
    items = sherliic_items(target)
    if items.empty:
        raise click.UsageError("no SherLIiC dev items: load them (`make baselines`) or set SHERLIIC_DATA")
    premises, hypotheses = list(items["premise_text"]), list(items["hypothesis_text"])
    chosen = [model] if model else [m.strip() for m in models.split(",") if m.strip()]
    results: dict = {"machine": bench.machine(), "cpu_count": os.cpu_count(), "speed": [], "quality": []}
    results["load_average_start"] = bench.load_average()
    for name in chosen:
        if not name.startswith(LOCAL_PREFIX) and name not in available_models(lm.run.cache_dir):
            print(f"skipped {name}: its weight package is not installed ({MODELS[name].install})")
            continue
        spec = chosen_spec(name, patterns, seeds, dataset, cosine_share)
        run = bench.bench_run(name, lm.run.cache_dir)
        rows = bench.speed(
            run,
            premises,
            hypotheses,
            threads=threads,
            batch_size=batch_size,
            cache_dir=lm.run.cache_dir,
            cosine_share=spec.cosine_share,
        )
        results["speed"] += rows
        for row in rows:
            print(
                f"{name} {row['backend']:9s} cosine share {row['cosine_share']:g}: "
                f"{row['pairs_per_second']:7.1f} pairs/s (load {row['load_average_before'][0]:.1f})"
            )
        if quality:
            try:
                rows = bench.quality(spec, verifier_items(target, spec), settings=lm.run, threads=threads)
            except ResourceMissing as missing:
                print(f"no fold figures for {name}: {missing}")
                continue
            results["quality"] += rows
            for row in rows:
                print(
                    f"{name} {row['backend']:9s} tm_cv F1 {100 * row['f1']:.1f}, AUC(p≥.5) "
                    f"{row['auc_pr50']:.3f}, max |Δp| vs torch {row['max_abs_diff_vs_torch']:.4f}"
                )
    results["load_average_end"] = bench.load_average()
    path = out / "bench" / "rank.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {path}")
    return 0
