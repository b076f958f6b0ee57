"""`make bench-rank`: how fast the ranking scores pairs, per model and backend, and what int8 costs.

Speed: pairs/s of PairScorer.score (pattern rendering, tokenization, length-sorted batches, the network)
on SherLIiC dev's 996 sentence pairs (the length of rendered rules), one pattern, `threads` threads,
after a warm-up; the ONNX exports are made before the clock starts. Speed does not depend on the weights'
values, so a model without a fine-tuned run is timed as its pretrained encoder with a seeded head
(saved once under <cache>/bench/).

Quality (int8 vs fp32): the verifier's runs (trained on lm_split=train) score SherLIiC dev on each
backend; F1 on lm_dev at the threshold tuned on lm_split=train, as the harness does
(baselines.metrics.best_f1_threshold), and the largest difference of a probability from torch's.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from baselines.lm.models import DEFAULT_CACHE_DIR
from baselines.lm.plan import BASE_RECIPE
from baselines.lm.rank.verifiers import RankingVerifier, ScoringRun
from baselines.metrics import best_f1_threshold, precision_recall_f1

BACKENDS = ("torch", "onnx-fp32", "onnx-int8")
BENCH_PATTERN = "x, which means that y"


def load_average() -> list[float]:
    with open("/proc/loadavg") as f:
        return [float(v) for v in f.read().split()[:3]]


def bench_run(model: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> ScoringRun:
    """The pretrained encoder of `model` with a seeded linear head, as a run (speed only)."""
    from baselines.lm import encoder  # torch

    weights = cache_dir / "bench" / model / "weights.safetensors"
    if not weights.is_file():
        encoder.torch.manual_seed(0)
        encoder.save_weights(encoder.CrossEncoder(encoder.load_encoder(model, cache_dir)), weights)
    return ScoringRun(
        key=f"bench-{model}",
        model=model,
        patterns=(BENCH_PATTERN,),
        weights=weights,
        max_length=BASE_RECIPE[model].max_length,
    )


def speed(
    run: ScoringRun,
    premises: list[str],
    hypotheses: list[str],
    *,
    threads: int,
    batch_size: int = 64,
    cache_dir: Path = DEFAULT_CACHE_DIR,
) -> list[dict]:
    """pairs/s of each backend on the pairs, and the largest difference from torch's probabilities."""
    from baselines.lm import inference  # torch, onnxruntime

    rows, reference = [], None
    for backend in BACKENDS:
        scorer = inference.PairScorer(
            [run], backend, threads=threads, batch_size=batch_size, cache_dir=cache_dir
        )
        scorer.score(premises[:batch_size], hypotheses[:batch_size])  # warm-up (and the export, once)
        load_before = load_average()
        start = time.perf_counter()
        scores = scorer.score(premises, hypotheses)
        seconds = time.perf_counter() - start
        reference = scores if reference is None else reference
        rows.append(
            {
                "model": run.model,
                "backend": backend,
                "threads": threads,
                "pairs": len(premises),
                "seconds": round(seconds, 3),
                "pairs_per_second": round(len(premises) / seconds, 1),
                "max_abs_diff_vs_torch": float(np.abs(scores - reference).max()),
                "load_average_before": load_before,
                "load_average_after": load_average(),
            }
        )
    return rows


def quality(
    verifier: RankingVerifier,
    items: pd.DataFrame,
    *,
    threads: int,
    cache_dir: Path = DEFAULT_CACHE_DIR,
) -> list[dict]:
    """F1 on SherLIiC lm_dev per backend (threshold tuned on lm_split=train), from the verifier's runs."""
    from baselines.lm import inference  # torch, onnxruntime

    dev = items[(items["dataset"] == "sherliic") & (items["split"] == "dev")]
    lm_split = dev["extra"].map(lambda e: (e or {}).get("lm_split") if isinstance(e, dict) else None)
    train, test = dev[lm_split == "train"], dev[lm_split == "dev"]
    rows, reference = [], None
    for backend in BACKENDS:
        scorer = inference.PairScorer(verifier.runs, backend, threads=threads, cache_dir=cache_dir)
        scored = {}
        for name, part in (("train", train), ("lm_dev", test)):
            scored[name] = scorer.score(list(part["premise_text"]), list(part["hypothesis_text"]))
        threshold = best_f1_threshold(train["label"].astype(bool).to_numpy(), scored["train"])
        labels = test["label"].astype(bool).to_numpy()
        p, r, f1 = precision_recall_f1(labels, scored["lm_dev"] >= threshold)
        both = np.concatenate([scored["train"], scored["lm_dev"]])
        reference = both if reference is None else reference
        rows.append(
            {
                "verifier": verifier.name,
                "backend": backend,
                "lm_dev_items": len(test),
                "threshold": round(float(threshold), 6),
                "precision": round(p, 4),
                "recall": round(r, 4),
                "f1": round(f1, 4),
                "max_abs_diff_vs_torch": float(np.abs(both - reference).max()),
            }
        )
    return rows


def machine() -> dict:
    return {
        "platform": platform.platform(),
        "processor": platform.processor(),
        "python": platform.python_version(),
    }
