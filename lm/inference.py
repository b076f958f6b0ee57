"""Fast scoring of (premise, hypothesis) pairs with fine-tuned cross-encoders: the ranking's engine room.

Three backends give the same probabilities (fp32 within 1e-5; int8 is an approximation, measured in
docs/lm.md):

- ``torch``      the trained CrossEncoder as `lm.encoder.predict` runs it;
- ``onnx-fp32``  the same network exported once to ONNX and run by ONNX Runtime;
- ``onnx-int8``  that export with its matrix products' weights quantized to int8, one scale per output
                 channel (dynamic quantization: activations are quantized on the fly, no calibration data).

Every backend scores length-sorted batches padded to their own longest pair (pairs are tokenized once,
sorted by token count, and cut into batches of `batch_size`), so short pairs never pay for long ones.
Exports are cached under <cache>/onnx/<run key>/ (``model.onnx``, ``model.<INT8_NAME>.onnx``), written
once and atomically: a run key fixes the trained weights (lm.runs.run_key), so an export never goes
stale. A run's score is the sigmoid of its logit, the mean over its patterns (a joint multi-pattern run)
and the verifier's score the mean over its runs, as lm.runs.run_scores computes them; a
verifier with a cosine share mixes in the zero-shot cosine of the premise and hypothesis sentences
(lm.verifier.mix), embedded by the model's pretrained encoder on the same backend (exported to
<cache>/onnx/zero-shot-<model>/), each distinct sentence once per scorer.

This module imports torch and onnxruntime at its top: import it lazily (the `[lm]` extra).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx.checker
import onnxruntime
import torch
from google.protobuf.message import DecodeError
from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidGraph, InvalidProtobuf
from onnxruntime.quantization import QuantType, quantize_dynamic

from lm import encoder
from lm.models import DEFAULT_CACHE_DIR
from lm.patterns import render
from lm.verifier import ScoringRun, mix

BACKENDS = ("torch", "onnx-fp32", "onnx-int8")
ONNX_OPSET = 17
INPUTS = ("input_ids", "attention_mask")
# int8: the matrix products' weights, one scale per output channel. Of the variants measured on SherLIiC
# lm_dev (docs/lm.md) this one stays closest to fp32 (mean |Δp| .015 vs .043 with one scale per tensor);
# the embedding lookups stay fp32 (memory, not compute). The name keys the cached file to the recipe.
INT8_OPTIONS = {"weight_type": QuantType.QInt8, "op_types_to_quantize": ["MatMul"], "per_channel": True}
INT8_NAME = "int8-matmul-per-channel"


def _tokenized(name: str, texts: list[str], max_length: int, cache_dir: Path) -> list[list[int]]:
    tok, _ = encoder.tokenizer_and_config(name, cache_dir)
    return tok(texts, padding=False, truncation=True, max_length=max_length)["input_ids"]


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """Indices of the texts in batches of similar length: sorted by token count (stable), then cut."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def padded(ids: list[list[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """(input_ids, attention_mask) as int64 arrays padded on the right to the longest sequence."""
    width = max(len(seq) for seq in ids)
    input_ids = np.full((len(ids), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for row, seq in enumerate(ids):
        input_ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return input_ids, mask


def _sigmoid(logits: np.ndarray) -> np.ndarray:
    """In float32 like torch.sigmoid, then float64 (as lm.encoder.predict returns it)."""
    logits = logits.astype(np.float32)
    return (np.float32(1) / (np.float32(1) + np.exp(-logits))).astype(np.float64)


# -- ONNX exports ----------------------------------------------------------------------------------------


def onnx_paths(run: ScoringRun, cache_dir: Path = DEFAULT_CACHE_DIR) -> dict[str, Path]:
    folder = cache_dir / "onnx" / run.key
    return {"onnx-fp32": folder / "model.onnx", "onnx-int8": folder / f"model.{INT8_NAME}.onnx"}


def encoder_onnx_paths(model: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> dict[str, Path]:
    """The exports of a model's pretrained encoder as a sentence embedder (the zero-shot cosine's)."""
    folder = cache_dir / "onnx" / f"zero-shot-{model}"
    return {"onnx-fp32": folder / "model.onnx", "onnx-int8": folder / f"model.{INT8_NAME}.onnx"}


class _Embedder(torch.nn.Module):
    """The pretrained encoder with mean pooling and L2 normalization: lm.encoder.embed as one
    network, so that ONNX Runtime runs all of it."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return torch.nn.functional.normalize(encoder.mean_pool(hidden, attention_mask), dim=-1)


def _export(
    paths: dict[str, Path], backend: str, network, model: str, output: str, info: dict, cache_dir: Path
):
    """paths[backend], exported from `network()` (fp32) and quantized (int8) on first use."""
    path = paths[backend]
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    fp32 = paths["onnx-fp32"]
    if not fp32.is_file():
        net = network().cpu().eval()
        tok, _ = encoder.tokenizer_and_config(model, cache_dir)
        example = tok(["a premise", "a longer hypothesis sentence"], padding=True, return_tensors="pt")
        with tempfile.TemporaryDirectory(dir=fp32.parent) as tmp, warnings.catch_warnings():
            # the tracer's notes on Python branches it fixes: none depends on the batch or its length
            # here (tests/test_lm_rank.py compares the export with torch on padded batches)
            warnings.simplefilter("ignore")
            staged = Path(tmp) / "model.onnx"
            torch.onnx.export(
                net,
                (example["input_ids"], example["attention_mask"]),
                str(staged),
                dynamo=False,  # the TorchScript exporter: no onnxscript dependency, dynamic axes as given
                input_names=list(INPUTS),
                output_names=[output],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "tokens"},
                    "attention_mask": {0: "batch", 1: "tokens"},
                    output: {0: "batch"},
                },
                opset_version=ONNX_OPSET,
            )
            staged.replace(fp32)  # same folder: atomic, a half-written export is never read
        info = {**info, "model": model, "torch": torch.__version__}
        (fp32.parent / "export.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    if backend == "onnx-int8" and not path.is_file():
        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            staged = Path(tmp) / path.name
            logging.disable(logging.WARNING)  # its advice to pre-process is for static quantization
            try:
                quantize_dynamic(fp32, staged, **INT8_OPTIONS)
            finally:
                logging.disable(logging.NOTSET)
            staged.replace(path)
    return path


def export_onnx(run: ScoringRun, backend: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """The run's ONNX model for `backend` (onnx-fp32 or onnx-int8), exported on first use."""
    return _export(
        onnx_paths(run, cache_dir),
        backend,
        lambda: encoder.load_weights(run.model, run.weights, cache_dir),
        run.model,
        "logit",
        {"run": run.key, "weights": str(run.weights)},
        cache_dir,
    )


def export_encoder_onnx(model: str, backend: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """The model's sentence embedder (pretrained encoder, mean pooling, L2 norm) for `backend`, exported on
    first use. The weights are those of the pinned model package, so the export never goes stale."""
    return _export(
        encoder_onnx_paths(model, cache_dir),
        backend,
        lambda: _Embedder(encoder.load_encoder(model, cache_dir)),
        model,
        "embedding",
        {"zero-shot": model},
        cache_dir,
    )


# what a damaged export raises (a file truncated or emptied by a full disk or a copy): ONNX Runtime when
# loading it, onnx when quantizing from it
DAMAGED_EXPORT = (
    InvalidArgument, InvalidGraph, InvalidProtobuf, Fail, onnx.checker.ValidationError, DecodeError,
)  # fmt: skip


def cached_session(paths: dict[str, Path], export: Callable[[], Path], threads: int):
    """A session on the export `export()` returns (one of `paths`). An export of the cache that cannot be
    loaded is exported again, with one line on stderr saying so: the exports of `paths` are removed
    (the int8 one is made from the fp32 one) and made anew."""
    try:
        return onnx_session(export(), threads)
    except DAMAGED_EXPORT as damaged:
        folder = paths["onnx-fp32"].parent
        reason = " ".join(str(damaged).split())[:200]
        print(
            f"{folder}: a cached ONNX export cannot be loaded ({type(damaged).__name__}: {reason}); "
            "exporting it again",
            file=sys.stderr,
            flush=True,
        )
        for path in paths.values():
            path.unlink(missing_ok=True)
        return onnx_session(export(), threads)


def onnx_session(path: Path, threads: int) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # a shared machine: idle worker threads yield the core instead of spinning on it
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


# -- scoring ---------------------------------------------------------------------------------------------


class RunScorer:
    """One run on one backend: pattern texts -> probabilities."""

    def __init__(
        self, run: ScoringRun, backend: str, *, threads: int = 1, cache_dir: Path = DEFAULT_CACHE_DIR
    ):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
        self.run, self.backend, self.threads, self.cache_dir = run, backend, threads, cache_dir
        tok, _ = encoder.tokenizer_and_config(run.model, cache_dir)
        self.pad_id = tok.pad_token_id
        if backend == "torch":
            torch.set_num_threads(threads)
            self._torch = encoder.load_weights(run.model, run.weights, cache_dir).cpu().eval()
        else:
            self._session = cached_session(
                onnx_paths(run, cache_dir), lambda: export_onnx(run, backend, cache_dir), threads
            )

    def logits(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.backend == "torch":
            with torch.inference_mode():
                return self._torch(torch.from_numpy(input_ids), torch.from_numpy(mask)).numpy()
        return self._session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]

    def probabilities(self, texts: list[str], batch_size: int = 64, progress=None) -> np.ndarray:
        """Sigmoid of the logit of each text; `progress(n)` is called after each batch of n texts."""
        ids = _tokenized(self.run.model, texts, self.run.max_length, self.cache_dir)
        out = np.zeros(len(texts), dtype=np.float64)
        for batch in length_sorted_batches([len(seq) for seq in ids], batch_size):
            input_ids, mask = padded([ids[i] for i in batch], self.pad_id)
            out[batch] = _sigmoid(self.logits(input_ids, mask))
            if progress is not None:
                progress(len(batch))
        return out


class SentenceEmbedder:
    """A model's zero-shot sentence embeddings on one backend, each distinct sentence embedded once per
    scorer (a build's candidates share their sentences across chunks): the cosine part of a mix. Equal to
    lm.encoder.cosine_scores (the benchmarks') within 1e-5 on torch and onnx-fp32."""

    MAX_LENGTH = 128  # as lm.encoder.embed
    MEMO = 50_000  # sentences kept; the memo is emptied when full

    def __init__(self, model: str, backend: str, *, threads: int = 1, cache_dir: Path = DEFAULT_CACHE_DIR):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
        self.model, self.backend, self.cache_dir = model, backend, cache_dir
        tok, _ = encoder.tokenizer_and_config(model, cache_dir)
        self.pad_id = tok.pad_token_id
        self._memo: dict[str, np.ndarray] = {}
        if backend == "torch":
            torch.set_num_threads(threads)
            self._torch = _Embedder(encoder.load_encoder(model, cache_dir)).cpu().eval()
        else:
            self._session = cached_session(
                encoder_onnx_paths(model, cache_dir),
                lambda: export_encoder_onnx(model, backend, cache_dir),
                threads,
            )

    def _embed(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.backend == "torch":
            with torch.inference_mode():
                return self._torch(torch.from_numpy(input_ids), torch.from_numpy(mask)).numpy()
        return self._session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]

    def vectors(self, sentences: Sequence[str], batch_size: int = 64) -> np.ndarray:
        new = sorted({s for s in sentences if s not in self._memo})
        if len(self._memo) + len(new) > self.MEMO:
            self._memo.clear()
            new = sorted(set(sentences))
        if new:
            ids = _tokenized(self.model, new, self.MAX_LENGTH, self.cache_dir)
            for batch in length_sorted_batches([len(seq) for seq in ids], batch_size):
                vectors = self._embed(*padded([ids[i] for i in batch], self.pad_id))
                for i, vector in zip(batch, vectors, strict=True):
                    self._memo[new[i]] = vector
        return np.stack([self._memo[s] for s in sentences])

    def cosine(self, premises: Sequence[str], hypotheses: Sequence[str], batch_size: int = 64) -> np.ndarray:
        p, h = self.vectors(premises, batch_size), self.vectors(hypotheses, batch_size)
        return (p * h).sum(1).astype(float)


class PairScorer:
    """A verifier's runs on one backend: (premise, hypothesis) pairs -> mean probability over its runs and
    their patterns, mixed with the zero-shot cosine by `cosine_share` (0: none). Models load once per
    process (Spark workers keep one per verifier and backend)."""

    def __init__(
        self,
        runs: Sequence[ScoringRun],
        backend: str = "torch",
        *,
        threads: int = 1,
        batch_size: int = 64,
        cache_dir: Path = DEFAULT_CACHE_DIR,
        cosine_share: float = 0.0,
    ):
        if not runs:
            raise ValueError("a verifier needs at least one run")
        self.batch_size, self.cache_dir, self.cosine_share = batch_size, cache_dir, cosine_share
        self.scorers = [RunScorer(run, backend, threads=threads, cache_dir=cache_dir) for run in runs]
        self.embedder = None
        if cosine_share:
            self.embedder = SentenceEmbedder(runs[0].model, backend, threads=threads, cache_dir=cache_dir)

    @property
    def passes(self) -> int:
        """Network passes per pair (runs x patterns): the unit of the progress callback."""
        return sum(len(s.run.patterns) for s in self.scorers)

    def score(self, premises: Sequence[str], hypotheses: Sequence[str], progress=None) -> np.ndarray:
        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
        if not len(premises):
            return np.zeros(0, dtype=np.float64)
        per_run = []
        for scorer in self.scorers:
            per_pattern = [
                scorer.probabilities(
                    [render(pattern, p, h) for p, h in zip(premises, hypotheses, strict=True)],
                    self.batch_size,
                    progress,
                )
                for pattern in scorer.run.patterns
            ]
            per_run.append(np.mean(per_pattern, axis=0))
        tuned = np.mean(per_run, axis=0)
        if self.embedder is None:
            return tuned
        return mix(tuned, self.embedder.cosine(premises, hypotheses, self.batch_size), self.cosine_share)


_SCORERS: dict[tuple, PairScorer] = {}


def cached_scorer(
    runs: tuple[ScoringRun, ...],
    backend: str,
    *,
    threads: int = 1,
    batch_size: int = 64,
    cache_dir: Path = DEFAULT_CACHE_DIR,
    cosine_share: float = 0.0,
) -> PairScorer:
    """One PairScorer per process and configuration (a Spark Python worker scores many partitions)."""
    key = (runs, backend, threads, batch_size, cache_dir, cosine_share, os.getpid())
    if key not in _SCORERS:
        _SCORERS[key] = PairScorer(
            runs,
            backend,
            threads=threads,
            batch_size=batch_size,
            cache_dir=cache_dir,
            cosine_share=cosine_share,
        )
    return _SCORERS[key]
