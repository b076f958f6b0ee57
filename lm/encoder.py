"""torch side of the LM baselines: a mean-pooled encoder, zero-shot cosine, and a cross-encoder
(encoder + linear head on the mean-pooled pattern sentence) fine-tuned with binary cross-entropy.

Only imported once lm.models.require_stack() has passed. Models and tokenizers are loaded from
their unpacked folder under `cache_dir` (lm.models.model_dir) with local_files_only=True: the
libraries never ask a model hub, whatever the environment says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

from lm.models import DEFAULT_CACHE_DIR, model_dir, no_transformers_bars_in_logs
from warehouse.terminal import Progress

no_transformers_bars_in_logs()


def device() -> torch.device:
    """CUDA when visible; the CPU path is the tested and benchmarked one."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def set_threads(n: int) -> int:
    """torch intra-op threads (LM_THREADS, default 1, lm.runs.RunSettings). On this shared 2-core
    machine one thread was 8x faster per training step than two under load (spinning OpenMP workers);
    `make bench-lm` measures both."""
    torch.set_num_threads(n)
    return n


_LOADED: dict[tuple[str, Path], tuple] = {}


def tokenizer_and_config(name: str, cache_dir: Path = DEFAULT_CACHE_DIR):
    path = model_dir(name, cache_dir)
    if (name, cache_dir) not in _LOADED:
        _LOADED[(name, cache_dir)] = (AutoTokenizer.from_pretrained(path, local_files_only=True), path)
    return _LOADED[(name, cache_dir)]


def load_encoder(name: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> torch.nn.Module:
    """A fresh copy of the pretrained encoder (weights from the unpacked package)."""
    path = model_dir(name, cache_dir)
    return AutoModel.from_pretrained(path, local_files_only=True)


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Average of the token vectors, padding excluded (sentence-transformers' pooling for these models)."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)


def _batches(n: int, size: int):
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


_BAR_LINE = 0  # terminal line of this process's progress bars (parallel workers: 1, 2, ...)


def set_bar_line(line: int) -> None:
    """Give this process's bars their own terminal line, so parallel workers (lm.jobs) do not
    overwrite each other's bars."""
    global _BAR_LINE
    _BAR_LINE = line


def _progress(slices: list[slice], desc: str, show: bool) -> Progress:
    return Progress(
        slices, desc=desc, unit="batch", disable=not show, position=_BAR_LINE, leave=_BAR_LINE == 0
    )


@torch.no_grad()
def embed(
    name: str,
    sentences: Sequence[str],
    *,
    batch_size: int = 64,
    show_progress: bool = True,
    desc: str = "embedding",
    cache_dir: Path = DEFAULT_CACHE_DIR,
) -> np.ndarray:
    """L2-normalized mean-pooled sentence embeddings (rows aligned with `sentences`)."""
    tok, _ = tokenizer_and_config(name, cache_dir)
    model = load_encoder(name, cache_dir).to(device()).eval()
    order = np.argsort([len(s) for s in sentences], kind="stable")  # similar lengths: less padding
    out = np.zeros((len(sentences), model.config.hidden_size), dtype=np.float32)
    for sl in _progress(list(_batches(len(sentences), batch_size)), desc, show_progress):
        idx = order[sl]
        enc = tok(
            [sentences[i] for i in idx], padding=True, truncation=True, max_length=128, return_tensors="pt"
        )
        enc = {k: v.to(device()) for k, v in enc.items()}
        pooled = mean_pool(model(**enc).last_hidden_state, enc["attention_mask"])
        out[idx] = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
    return out


def cosine_scores(
    name: str,
    premises: Sequence[str],
    hypotheses: Sequence[str],
    *,
    show_progress: bool = True,
    cache_dir: Path = DEFAULT_CACHE_DIR,
) -> np.ndarray:
    """Zero-shot: cosine of premise and hypothesis embeddings (symmetric in the two sentences)."""
    unique = sorted(set(premises) | set(hypotheses))
    vectors = embed(name, unique, show_progress=show_progress, desc=f"zero-shot {name}", cache_dir=cache_dir)
    row = {s: i for i, s in enumerate(unique)}
    p = vectors[[row[s] for s in premises]]
    h = vectors[[row[s] for s in hypotheses]]
    return (p * h).sum(1).astype(float)


class CrossEncoder(torch.nn.Module):
    """Pretrained encoder + a linear head on the mean-pooled pattern sentence -> one entailment logit."""

    def __init__(self, encoder: torch.nn.Module):
        super().__init__()
        self.encoder = encoder
        self.head = torch.nn.Linear(encoder.config.hidden_size, 1)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(mean_pool(hidden, attention_mask)).squeeze(-1)


@dataclass(frozen=True)
class TrainSettings:
    epochs: int
    batch_size: int
    lr: float
    head_lr: float
    weight_decay: float
    warmup: float  # share of the steps with a linear learning-rate warm-up, then linear decay to 0
    max_length: int
    seed: int


def fine_tune(
    name: str,
    texts: Sequence[str],
    labels: Sequence[float],
    settings: TrainSettings,
    *,
    pairs: Sequence[tuple[int, int]] = (),
    pair_weight: float = 0.0,
    show_progress: bool = True,
    desc: str = "fine-tune",
    cache_dir: Path = DEFAULT_CACHE_DIR,
) -> CrossEncoder:
    """Fine-tune a fresh cross-encoder; fully determined by `settings.seed` on one device/thread count.

    `pairs` (i, j): text i is true and text j is its reverse, false. With a `pair_weight`, the two stay in
    one batch and the loss adds pair_weight * mean(-log sigmoid(logit_i - logit_j)) over the batch's pairs:
    the model is told which direction holds, not only that each text is true or false."""
    torch.manual_seed(settings.seed)
    np.random.seed(settings.seed)
    tok, _ = tokenizer_and_config(name, cache_dir)
    model = CrossEncoder(load_encoder(name, cache_dir)).to(device())
    torch.manual_seed(settings.seed)  # the head's initialization
    model.head.reset_parameters()
    enc = tok(list(texts), padding=False, truncation=True, max_length=settings.max_length)
    y = torch.tensor([float(v) for v in labels])
    head = list(model.head.parameters())
    body = [p for n, p in model.named_parameters() if not n.startswith("head.")]
    optimizer = torch.optim.AdamW(
        [{"params": body, "lr": settings.lr}, {"params": head, "lr": settings.head_lr}],
        weight_decay=settings.weight_decay,
    )
    steps_per_epoch = (len(texts) + settings.batch_size - 1) // settings.batch_size
    total = max(1, steps_per_epoch * settings.epochs)
    warm = max(1, int(settings.warmup * total))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warm, max(0.0, (total - step) / max(1, total - warm)))
    )
    generator = torch.Generator().manual_seed(settings.seed)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    partner = {i: j for i, j in pairs}  # true text -> its false reverse
    model.train()
    paired = list(pairs) if pair_weight > 0 else []
    for epoch in range(settings.epochs):
        if paired:
            batches = _paired_batches(len(texts), paired, settings.batch_size, generator)
        else:
            order = torch.randperm(len(texts), generator=generator).tolist()
            batches = [order[sl] for sl in _batches(len(order), settings.batch_size)]
        bar = _progress(batches, f"{desc} epoch {epoch + 1}/{settings.epochs}", show_progress)
        for idx in bar:
            batch = tok.pad(
                {
                    "input_ids": [enc["input_ids"][i] for i in idx],
                    "attention_mask": [enc["attention_mask"][i] for i in idx],
                },
                return_tensors="pt",
            )
            logits = model(batch["input_ids"].to(device()), batch["attention_mask"].to(device()))
            loss = loss_fn(logits, y[idx].to(device()))
            if paired:
                loss = loss + pair_weight * _direction_loss(logits, idx, partner)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            bar.set_postfix(loss=f"{loss.item():.3f}")
    return model.eval()


def _paired_batches(
    n: int, pairs: list[tuple[int, int]], size: int, generator: torch.Generator
) -> list[list[int]]:
    """One epoch's batches: the texts shuffled with each pair kept together (a batch may hold one more
    than `size` when a pair closes it)."""
    in_pair = {k for pair in pairs for k in pair}
    units = [list(pair) for pair in pairs] + [[i] for i in range(n) if i not in in_pair]
    batches, current = [], []
    for u in torch.randperm(len(units), generator=generator).tolist():
        current += units[u]
        if len(current) >= size:
            batches.append(current)
            current = []
    return batches + ([current] if current else [])


def _direction_loss(logits: torch.Tensor, idx: list[int], partner: dict[int, int]) -> torch.Tensor:
    """mean -log sigmoid(logit(true direction) - logit(reverse)) over the pairs inside the batch."""
    where = {k: n for n, k in enumerate(idx)}
    rows = [(where[i], where[partner[i]]) for i in idx if i in partner and partner[i] in where]
    if not rows:
        return logits.new_zeros(())
    true, reverse = zip(*rows, strict=True)
    return torch.nn.functional.softplus(logits[list(reverse)] - logits[list(true)]).mean()


@torch.no_grad()
def predict(
    model: CrossEncoder,
    name: str,
    texts: Sequence[str],
    *,
    max_length: int,
    batch_size: int = 64,
    show_progress: bool = True,
    desc: str = "scoring",
    cache_dir: Path = DEFAULT_CACHE_DIR,
) -> np.ndarray:
    """Entailment probabilities (sigmoid of the logit) for pattern sentences."""
    tok, _ = tokenizer_and_config(name, cache_dir)
    model.eval()
    order = np.argsort([len(t) for t in texts], kind="stable")
    out = np.zeros(len(texts), dtype=float)
    for sl in _progress(list(_batches(len(texts), batch_size)), desc, show_progress):
        idx = order[sl]
        enc = tok(
            [texts[i] for i in idx], padding=True, truncation=True, max_length=max_length, return_tensors="pt"
        )
        logits = model(enc["input_ids"].to(device()), enc["attention_mask"].to(device()))
        out[idx] = torch.sigmoid(logits).double().cpu().numpy()
    return out


def save_weights(model: CrossEncoder, path: Path) -> None:
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    save_file({k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}, str(tmp))
    tmp.replace(path)


def load_weights(name: str, path: Path, cache_dir: Path = DEFAULT_CACHE_DIR) -> CrossEncoder:
    from safetensors.torch import load_file

    model = CrossEncoder(load_encoder(name, cache_dir))
    model.load_state_dict(load_file(str(path)))
    return model.to(device()).eval()
