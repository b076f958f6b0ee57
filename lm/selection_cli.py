"""`sherliic-lm select`: judge one candidate on the selection folds (lm.selection), rows merged
into out/lm/selection.csv, out/lm/selection.md and the cost plot rewritten (lm.selection_report);
`sherliic-lm select-report`: those two rewritten from the csv alone.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import click
import pandas as pd

from evaluation.datasets.folds import SCHEMES
from lm import selection, selection_report
from lm.command_options import (
    MODEL,
    MODEL_HELP,
    comma_list,
    installed_models,
    load_average,
    loaded_items,
    out_option,
    seed_list,
    workers_option,
)
from lm.jobs import default_workers
from lm.plan import LmSettings
from lm.verifier import VerifierSpec
from warehouse.command_line import target_options
from warehouse.target import ENGINES, Target


@click.command("select")
@click.option("--model", type=MODEL, default="minilm", show_default=True, help=MODEL_HELP)
@click.option(
    "--patterns",
    default="x, which means that y",
    show_default=True,
    help="`;`-separated run patterns; one run per pattern, `a | b` = one run trained on both; "
    "'hypothesis only' = the probe.",
)
@click.option("--dataset", default="sherliic", show_default=True, help="Whose labelled pool trains it.")
@click.option("--extra", multiple=True, callback=comma_list, metavar="NAME[,NAME]", help="More pools.")
@click.option("--direction", type=click.FloatRange(min=0), default=0.0, help="Directional loss weight.")
@click.option("--epochs", type=click.IntRange(min=1), help="Epochs (default: the plan's rule).")
@click.option("--seeds", multiple=True, callback=seed_list, metavar="N[,N]", help="Default: 0,1,2.")
@click.option(
    "--folds",
    "schemes",
    multiple=True,
    callback=comma_list,
    metavar="tm|pd",
    help="Fold schemes (default tm: matched to the test's overlap profile; pd: predicate-disjoint).",
)
@click.option(
    "--cosine-shares",
    default="0,0.75",
    show_default=True,
    metavar="C[,C]",
    help="Variants: shares of the zero-shot cosine mixed in (0: the fine-tuned runs alone; 1: the cosine).",
)
@click.option(
    "--both-orders",
    default="0",
    show_default=True,
    metavar="W[,W]",
    help="Variants: weight of the reversed pair's score subtracted (0: none).",
)
@click.option(
    "--teacher",
    metavar="JSON",
    help='Distil: train on this teacher\'s scores, e.g. \'{"model": "mpnet", "patterns": '
    '["x, which means that y"], "seeds": [0, 1, 2], "cosine_share": 0.75}\' (same pools).',
)
@click.option("--old-split", is_flag=True, help="Also the protocol used before (lm_dev / dev), leaky.")
@workers_option
@out_option
@target_options(engines=ENGINES)
def select_command(
    target: Target,
    model: str,
    patterns: str,
    dataset: str,
    extra: tuple[str, ...],
    direction: float,
    epochs: int | None,
    seeds: tuple[int, ...],
    schemes: tuple[str, ...],
    cosine_shares: str,
    both_orders: str,
    teacher: str | None,
    old_split: bool,
    workers: int | None,
    out: Path,
) -> int:
    """Judge one candidate on the selection folds; rows merged into out/lm/selection.{csv,md}."""
    settings = LmSettings.from_environment()
    spec = VerifierSpec(
        model=model,
        patterns=tuple(p.strip() for p in patterns.split(";") if p.strip()),
        dataset=dataset,
        extra=extra,
        seeds=seeds or (0, 1, 2),
        direction=direction,
        epochs=epochs,
        folds=settings.plan.folds,
        teacher=_teacher(teacher, dataset, extra, settings.plan.folds),
    )
    for scheme in schemes:
        if scheme not in SCHEMES:
            raise click.BadParameter(f"{scheme!r}; known: {', '.join(SCHEMES)}", param_hint="--folds")
    shares, weights = _numbers(cosine_shares, "--cosine-shares", 1.0), _numbers(both_orders, "--both-orders")
    variants = tuple(
        selection.Variant(cosine=c, reverse=w) for w in weights for c in shares if c < 1 or not w
    )  # share 1: the zero-shot cosine alone, which reads both orders alike
    installed_models(replace(settings, models=(model,)))
    items = loaded_items(target)
    if not (items["dataset"] == dataset).any():
        raise click.BadParameter(f"{dataset!r} is not loaded", param_hint="--dataset")
    start, load_before = time.perf_counter(), load_average()
    rows = []
    for scheme in schemes or ("tm",):
        scores = selection.honest_scores(
            spec,
            items,
            settings,
            workers=workers or default_workers(),
            scheme=scheme,
            reverse=any(weights),
            cosine=any(shares),
        )
        rows += selection.honest_rows(scores, variants)
    if old_split:
        rows += selection.old_split_rows(spec, items, settings)
    seconds, load_after = time.perf_counter() - start, load_average()
    path = out / "lm" / "selection.csv"
    frame = selection.merge(pd.DataFrame(rows), pd.read_csv(path) if path.is_file() else None)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, float_format="%.6g")
    (out / "lm" / "selection.md").write_text(selection_report.markdown(frame))
    selection_report.plot_cost(frame, out / "lm" / "selection_cost.png")
    log = {
        "candidate": selection.candidate_name(spec),
        "seeds": list(spec.seeds),
        "folds": list(schemes or ("tm",)),
        "seconds": round(seconds),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "workers": workers or default_workers(),
    }
    with (out / "lm" / "selection_log.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(log) + "\n")
    shown = pd.DataFrame(rows)
    ensemble = shown["seed"].astype(str) == "mean"
    shown = shown[ensemble] if ensemble.any() else shown
    columns = ["variant", "protocol", "dataset", "seed", "f1", "auc_pr50", "auc_norm", "pair", "both", "any"]
    print(shown.reindex(columns=columns).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"{log['candidate']}: {seconds / 60:.1f} min, load {load_before} -> {load_after}; wrote {path}")
    return 0


@click.command("select-report")
@out_option
def select_report_command(out: Path) -> int:
    """Rewrite out/lm/selection.md and the cost plot from out/lm/selection.csv (no training, no database)."""
    path = out / "lm" / "selection.csv"
    if not path.is_file():
        raise click.UsageError(f"{path}: no selection file; run `python -m lm.cli select` first")
    frame = pd.read_csv(path)
    (out / "lm" / "selection.md").write_text(selection_report.markdown(frame))
    plot = selection_report.plot_cost(frame, out / "lm" / "selection_cost.png")
    print(f"wrote {out / 'lm' / 'selection.md'}" + (f" and {plot}" if plot else ""))
    return 0


def _teacher(value: str | None, dataset: str, extra: tuple[str, ...], folds: int):
    """The --teacher JSON as a VerifierSpec on the student's pools (None without one)."""
    if value is None:
        return None
    try:
        data = json.loads(value)
        return VerifierSpec.from_dict({**data, "dataset": dataset, "extra": list(extra), "folds": folds})
    except (ValueError, KeyError, TypeError) as exc:
        raise click.BadParameter(f"{value!r}: {exc}", param_hint="--teacher") from None


def _numbers(value: str, option: str, high: float = float("inf")) -> tuple[float, ...]:
    try:
        numbers = tuple(float(v) for v in value.split(",") if v.strip())
    except ValueError:
        raise click.BadParameter(f"expected numbers, got {value!r}", param_hint=option) from None
    if not numbers or any(not 0 <= n <= high for n in numbers):
        raise click.BadParameter(f"expected numbers from 0 to {high:g}, got {value!r}", param_hint=option)
    return numbers
