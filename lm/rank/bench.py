"""`make bench-rank`: how fast the ranking scores pairs, per model and backend, and what int8 costs.

Speed: pairs/s of PairScorer.score (pattern rendering, tokenization, length-sorted batches, the network)
on SherLIiC dev's 996 sentence pairs (the length of rendered rules), one pattern, `threads` threads,
after a warm-up; the ONNX exports are made before the clock starts. Speed does not depend on the weights'
values, so a model without a fine-tuned run is timed as its pretrained encoder with a seeded head
(saved once under <cache>/bench/).

Each backend is timed alone and with the verifier's cosine share (the zero-shot cosine mixed in: one
embedding per distinct sentence, torch).

Quality (int8 vs fp32): the verifier's figures on the selection folds of its pool (split `tm_cv`, as
`sherliic-lm select` computes them), per backend: each fold's items scored by the fold model that never
saw them (the runs `select` trained and cached), mixed with the cosine by the verifier's share;
F1 with cross-fitted thresholds, AUC(p≥.5), AUC_norm, ROC AUC, and the largest and mean difference of a
score from torch's.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from evaluation import metrics
from lm.crossfit import CrossFit
from lm.models import DEFAULT_CACHE_DIR
from lm.plan import base_recipe
from lm.runs import RunSettings
from lm.verifier import ScoringRun, VerifierSpec, fold_verifier

BACKENDS = ("torch", "onnx-fp32", "onnx-int8")
BENCH_PATTERN = "x, which means that y"


def load_average() -> list[float]:
    with open("/proc/loadavg") as f:
        return [float(v) for v in f.read().split()[:3]]


def bench_run(model: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> ScoringRun:
    """The pretrained encoder of `model` with a seeded linear head, as a run (speed only)."""
    from lm import encoder  # torch

    weights = cache_dir / "bench" / model / "weights.safetensors"
    if not weights.is_file():
        encoder.torch.manual_seed(0)
        encoder.save_weights(encoder.CrossEncoder(encoder.load_encoder(model, cache_dir)), weights)
    return ScoringRun(
        key=f"bench-{model}",
        model=model,
        patterns=(BENCH_PATTERN,),
        weights=weights,
        max_length=base_recipe(model).max_length,
    )


def speed(
    run: ScoringRun,
    premises: list[str],
    hypotheses: list[str],
    *,
    threads: int,
    batch_size: int = 64,
    cache_dir: Path = DEFAULT_CACHE_DIR,
    cosine_share: float = 0.0,
) -> list[dict]:
    """pairs/s of each backend on the pairs (alone, then with the cosine mixed in when `cosine_share`),
    and the largest difference from torch's scores."""
    from lm import inference  # torch, onnxruntime

    rows, reference = [], {}
    for share in sorted({0.0, cosine_share}):
        for backend in BACKENDS:
            scorer = inference.PairScorer(
                [run],
                backend,
                threads=threads,
                batch_size=batch_size,
                cache_dir=cache_dir,
                cosine_share=share,
            )
            scorer.score(premises[:batch_size], hypotheses[:batch_size])  # warm-up (and the export, once)
            load_before = load_average()
            start = time.perf_counter()
            scores = scorer.score(premises, hypotheses)
            seconds = time.perf_counter() - start
            reference.setdefault(share, scores)
            rows.append(
                {
                    "model": run.model,
                    "backend": backend,
                    "cosine_share": share,
                    "threads": threads,
                    "pairs": len(premises),
                    "distinct_sentences": len(set(premises) | set(hypotheses)),
                    "seconds": round(seconds, 3),
                    "pairs_per_second": round(len(premises) / seconds, 1),
                    "max_abs_diff_vs_torch": float(np.abs(scores - reference[share]).max()),
                    "load_average_before": load_before,
                    "load_average_after": load_average(),
                }
            )
    return rows


def quality(
    spec: VerifierSpec,
    items: pd.DataFrame,
    *,
    settings: RunSettings,
    threads: int,
    batch_size: int = 64,
) -> list[dict]:
    """The verifier's `tm_cv` figures per backend, from its fold models (ResourceMissing when one is not
    trained: `sherliic-lm select` trains them)."""
    from lm import inference  # torch, onnxruntime

    source = items[items["dataset"] == spec.dataset]
    extra = items[items["dataset"].isin([d for d in spec.extra if d != spec.dataset])]
    fit = CrossFit.of(spec.dataset, source, extra if len(extra) else None, spec.folds)
    pool = fit.pool
    folds = fit.fold_of(pool).to_numpy()
    inside = folds >= 0
    labels = pool["label"].astype(bool).to_numpy()
    fold_runs = {}
    for part in fit.parts(pool):
        if part.fold is None:
            continue
        verifier = fold_verifier(spec, part.training, part.n_nominal, settings=settings, allow_compute=False)
        fold_runs[part.fold] = verifier.trained(settings=settings, allow_compute=False).runs
    rows, reference = [], None
    for backend in BACKENDS:
        scores = np.full(len(pool), np.nan)
        start = time.perf_counter()
        for fold, runs in fold_runs.items():
            scorer = inference.PairScorer(
                runs,
                backend,
                threads=threads,
                batch_size=batch_size,
                cache_dir=settings.cache_dir,
                cosine_share=spec.cosine_share,
            )
            here = folds == fold
            part = pool[here]
            scores[here] = scorer.score(list(part["premise_text"]), list(part["hypothesis_text"]))
        seconds = time.perf_counter() - start
        y, s, f = labels[inside], scores[inside], folds[inside]
        p, r, f1 = metrics.precision_recall_f1(y, metrics.cross_fitted_predictions(y, s, f))
        reference = s if reference is None else reference
        rows.append(
            {
                "verifier": f"{spec.model} {list(spec.patterns)} {spec.dataset} seeds {list(spec.seeds)}",
                "cosine_share": spec.cosine_share,
                "backend": backend,
                "split": "tm_cv",
                "items": int(inside.sum()),
                "precision": round(p, 4),
                "recall": round(r, 4),
                "f1": round(f1, 4),
                "auc_pr50": round(metrics.auc_pr_above(y, s), 4),
                "auc_norm": round(metrics.auc_normalized(y, s), 4),
                "roc_auc": round(metrics.roc_auc(y, s), 4),
                "max_abs_diff_vs_torch": float(np.abs(s - reference).max()),
                "mean_abs_diff_vs_torch": float(np.abs(s - reference).mean()),
                "seconds": round(seconds, 1),
            }
        )
    return rows


def machine() -> dict:
    return {
        "platform": platform.platform(),
        "processor": platform.processor(),
        "python": platform.python_version(),
    }
