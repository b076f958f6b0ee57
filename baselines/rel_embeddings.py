"""Relation embeddings learned from the TEG (paper §4, Table 3: typed_rel_emb, untyped_rel_emb, w2v+…).

As in the original code: a synthetic corpus with one line per (entity pair, relation), repeated `count`
times, `arg0:<e1> <relation> arg1:<e2>`, and a gensim word2vec skip-gram (dim 300, otherwise gensim's
defaults, so relations seen fewer than min_count=5 times get no vector). The score is the cosine of the
premise's and the hypothesis' relation vectors (orientation-free, as in the original).

Relation tokens: `rel:<rel_id>` (untyped, from the build's untyped_edges) and `trel:<typed_rel_id>` (typed,
from its teg_edges); items are mapped to them by baselines.distributional.resolve_keys.

Models are cached under out/rel_emb/ keyed by an md5 of the edge mart's content and the training
parameters, so a rebuilt TEG retrains and an unchanged one does not.

w2v+typed_rel / w2v+untyped_rel: word2vec cosine + relation cosine; a missing relation vector adds 0
(the word vectors still score the item), NaN only when both are missing.
w2v+tsg_rel_emb: per type signature `typeA/typeB` of the premise (SherLIiC orientation) use typed or
untyped relation embeddings, whichever works better on dev: the original's precomputed preference
(shared `sherliic/tsg_typed_vs_untyped.txt`, baseline "w2v+tsg_rel_emb") or learned from our SherLIiC-dev
(lm_split train items, best F1 per signature, baseline "w2v+tsg_rel_emb (learned)"). Unseen signature:
majority vote of the preferences of the signatures sharing one of its single types; untyped on a tie or
when nothing is known.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from baselines.distributional import items_key, resolve_keys
from baselines.word_vectors import word2vec_score
from evaluation.datasets import sherliic_splits
from evaluation.metrics import best_f1_threshold, precision_recall_f1
from evaluation.registry import Context, ResourceMissing, register
from warehouse.errors import InputError
from warehouse.settings import out_folder, shared_data_dir
from warehouse.target import Marts, Target, marts_of

log = logging.getLogger(__name__)

TOKEN_PREFIX = {"untyped": "rel:", "typed": "trel:"}
EDGE_TABLES = {  # the edge mart and its relation key, in the marts schema of the build read
    "untyped": ("untyped_edges", "rel_id"),
    "typed": ("teg_edges", "typed_rel_id"),
}


def edge_query(variant: str, text: str, schema: str = "warehouse") -> str:
    """The corpus' edges (relation token, entity ids as text, count), in one order on both engines (text
    compared byte-wise: the embedded Postgres' C collation, Spark's binary strings); `text` is the
    engine's text type (Marts.type), `schema` the build's marts schema (Marts.schema)."""
    table, key = EDGE_TABLES[variant]
    return (
        f"select concat('{TOKEN_PREFIX[variant]}', cast({key} as {text})), cast(arg1_entity_id as {text}),"
        f" cast(arg2_entity_id as {text}), n_instances from {schema}.{table} order by 1, 2, 3"
    )


@dataclass(frozen=True)
class TrainParams:
    vector_size: int = 300
    workers: int = 3  # gensim's default; tests use 1 for determinism
    seed: int = 1  # gensim's default
    min_count: int = 5  # gensim's default

    def key(self) -> str:
        return f"d{self.vector_size}-w{self.workers}-s{self.seed}-m{self.min_count}"


def _token(value: str) -> str:
    return "_".join(str(value).split())


def corpus_lines(rows) -> Iterator[list[str]]:
    """The synthetic corpus: `arg0:<e1> <relation> arg1:<e2>` repeated n_instances times per edge."""
    for relation, e1, e2, count in rows:
        line = [f"arg0:{_token(e1)}", relation, f"arg1:{_token(e2)}"]
        for _ in range(int(count)):
            yield line


def marts_fingerprint(warehouse: Target | Marts, variant: str) -> str:
    """md5 of the edge mart's content (order-independent of storage), the model cache key."""
    table = EDGE_TABLES[variant][0]
    with marts_of(warehouse) as marts:
        if not marts.has_table(marts.schema, table):
            raise ResourceMissing(f"mart {marts.schema}.{table} is missing: run `make dbt-run` first")
        digest, separator = hashlib.md5(), b""
        # the edges joined as r,a,b,n;…
        for row in marts.stream(edge_query(variant, marts.type("text"), marts.schema)):
            digest.update(separator + ",".join(map(str, row)).encode())
            separator = b";"
    return digest.hexdigest()


class _Corpus:
    """Restartable iterable over the corpus written to a file (gensim reads it once per epoch)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __iter__(self) -> Iterator[list[str]]:
        with self.path.open(encoding="utf-8") as handle:
            for line in handle:
                yield line.split()


def train_embeddings(
    warehouse: Target | Marts, variant: str, params: TrainParams | None = None, cache_dir: Path | None = None
):
    """The KeyedVectors of `variant` ('typed' | 'untyped'), trained or loaded from the cache."""
    from gensim.models import KeyedVectors, Word2Vec

    params = params or TrainParams()
    cache_dir = cache_dir or out_folder() / "rel_emb"
    cache_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = marts_fingerprint(warehouse, variant)
    model_path = cache_dir / f"{variant}-{fingerprint}-{params.key()}.kv"
    if model_path.exists():
        return KeyedVectors.load(str(model_path))
    corpus_path = cache_dir / f"{variant}-{fingerprint}.corpus.txt"
    with marts_of(warehouse) as marts, corpus_path.open("w", encoding="utf-8") as out:
        n_lines = 0
        for line in corpus_lines(marts.stream(edge_query(variant, marts.type("text"), marts.schema))):
            out.write(" ".join(line) + "\n")
            n_lines += 1
    if n_lines == 0:
        raise ResourceMissing(f"warehouse {variant} edges are empty: load a corpus and run `make dbt-run`")
    log.info("training %s relation embeddings on %d lines", variant, n_lines)
    model = Word2Vec(
        _Corpus(corpus_path),
        vector_size=params.vector_size,
        sg=1,
        workers=params.workers,
        seed=params.seed,
        min_count=params.min_count,
    )
    model.wv.save(str(model_path))
    corpus_path.unlink()  # the model is cached; the corpus can be regenerated from the marts
    return model.wv


def relation_cosines(
    items: pd.DataFrame,
    ctx: Context,
    variant: str,
    params: TrainParams | None = None,
    cache_dir: Path | None = None,
) -> pd.Series:
    """Cosine of the premise's and hypothesis' relation vectors; NaN when either has none."""
    key = ("rel_emb", variant, ctx.target, params, items_key(items))
    if key in ctx.cache:
        return ctx.cache[key]
    model_key = ("rel_emb_model", variant, ctx.target, params)
    if model_key not in ctx.cache:
        ctx.cache[model_key] = train_embeddings(ctx.warehouse, variant, params, cache_dir)
    wv = ctx.cache[model_key]
    keys = resolve_keys(items, ctx.warehouse, variant)
    prefix = TOKEN_PREFIX[variant]
    scores = pd.Series(np.nan, index=items.index, dtype=float)
    for label, prem_key, hypo_key in keys[["prem_key", "hypo_key"]].itertuples():
        if pd.isna(prem_key) or pd.isna(hypo_key):
            continue
        a, b = f"{prefix}{int(prem_key)}", f"{prefix}{int(hypo_key)}"
        if a in wv.key_to_index and b in wv.key_to_index:
            scores[label] = float(wv.similarity(a, b))
    ctx.cache[key] = scores
    return scores


@register("typed_rel_emb", tunable=True, description="cosine of typed relation vectors (word2vec on the TEG)")
def typed_rel_emb(items: pd.DataFrame, ctx: Context) -> pd.Series:
    return relation_cosines(items, ctx, "typed")


@register(
    "untyped_rel_emb", tunable=True, description="cosine of untyped relation vectors (word2vec on the TEG)"
)
def untyped_rel_emb(items: pd.DataFrame, ctx: Context) -> pd.Series:
    return relation_cosines(items, ctx, "untyped")


def word_vector_scores(items: pd.DataFrame, ctx: Context) -> pd.Series:
    """The word2vec baseline's scores (baselines.word_vectors, GloVe substitute)."""
    key = ("w2v_scores", items_key(items))
    if key not in ctx.cache:
        ctx.cache[key] = word2vec_score(items, ctx)
    return ctx.cache[key]


def combine(w2v: pd.Series, rel: pd.Series) -> pd.Series:
    """Sum of cosines; a missing relation cosine adds 0, NaN only when both are missing."""
    total = w2v.fillna(0.0) + rel.fillna(0.0)
    return total.where(w2v.notna() | rel.notna())


@register("w2v+typed_rel", tunable=True, description="word2vec cosine + typed relation-embedding cosine")
def w2v_typed_rel(items: pd.DataFrame, ctx: Context) -> pd.Series:
    return combine(word_vector_scores(items, ctx), relation_cosines(items, ctx, "typed"))


@register("w2v+untyped_rel", tunable=True, description="word2vec cosine + untyped relation-embedding cosine")
def w2v_untyped_rel(items: pd.DataFrame, ctx: Context) -> pd.Series:
    return combine(word_vector_scores(items, ctx), relation_cosines(items, ctx, "untyped"))


# --- type-signature preference --------------------------------------------------------------------


def signature(item: pd.Series) -> str | None:
    a, b = item.get("premise_type_a"), item.get("premise_type_b")
    if isinstance(a, str) and isinstance(b, str) and a and b:
        return f"{a}/{b}"
    return None


def read_preference_file(path: str | Path) -> dict[str, bool]:
    """`typeA/typeB<TAB>1|0` (1 = typed embeddings are better) -> {signature: use_typed}."""
    preference: dict[str, bool] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 2 or parts[1] not in ("0", "1") or "/" not in parts[0]:
                raise InputError(str(path), number, f"expected 'typeA/typeB<TAB>0|1', got {line.strip()!r}")
            preference[parts[0]] = parts[1] == "1"
    return preference


def learn_preference(
    items: pd.DataFrame, typed_scores: pd.Series, untyped_scores: pd.Series
) -> dict[str, bool]:
    """Per signature: True iff typed scores reach a strictly higher best F1 than untyped on these items."""

    def best_f1(labels: np.ndarray, scores: np.ndarray) -> float:
        threshold = best_f1_threshold(labels, scores)
        return precision_recall_f1(labels, scores >= threshold)[2]

    preference: dict[str, bool] = {}
    sigs = items.apply(signature, axis=1)
    for sig, group in items.groupby(sigs):
        labels = group["label"].astype(bool).to_numpy()
        floor_t = typed_scores[group.index].min() if typed_scores[group.index].notna().any() else 0.0
        floor_u = untyped_scores[group.index].min() if untyped_scores[group.index].notna().any() else 0.0
        t = typed_scores[group.index].fillna(floor_t - 1).to_numpy(dtype=float)
        u = untyped_scores[group.index].fillna(floor_u - 1).to_numpy(dtype=float)
        preference[str(sig)] = best_f1(labels, t) > best_f1(labels, u)
    return preference


def choose_typed(sig: str | None, preference: dict[str, bool]) -> bool:
    """Preference for `sig`; unseen: majority vote over signatures sharing one of its types; else untyped."""
    if sig is None:
        return False
    if sig in preference:
        return preference[sig]
    votes: Counter[bool] = Counter()
    for single in sig.split("/"):
        for known, use_typed in preference.items():
            if single in known.split("/"):
                votes[use_typed] += 1
    return votes[True] > votes[False]


def tsg_scores(items: pd.DataFrame, ctx: Context, preference: dict[str, bool]) -> pd.Series:
    w2v = word_vector_scores(items, ctx)
    typed = combine(w2v, relation_cosines(items, ctx, "typed"))
    untyped = combine(w2v, relation_cosines(items, ctx, "untyped"))
    use_typed = items.apply(lambda item: choose_typed(signature(item), preference), axis=1).astype(bool)
    return typed.where(use_typed, untyped)


@register(
    "w2v+tsg_rel_emb",
    tunable=True,
    description="w2v + typed or untyped rel emb per type signature (original preference file)",
)
def w2v_tsg_rel_emb(items: pd.DataFrame, ctx: Context) -> pd.Series:
    path = Path(ctx.shared_data or shared_data_dir()) / "sherliic" / "tsg_typed_vs_untyped.txt"
    if not path.exists():
        raise ResourceMissing(f"{path} is missing: w2v+tsg_rel_emb needs the shared preference file")
    return tsg_scores(items, ctx, read_preference_file(path))


def sherliic_dev_training_items(ctx: Context) -> pd.DataFrame:
    """SherLIiC-dev items of lm_split train (the split the paper's tuning may see)."""
    path = Path(ctx.shared_data or shared_data_dir())
    if not (path / "sherliic" / "dev.tsv").exists():
        raise ResourceMissing(f"{path}/sherliic/dev.tsv is missing (the learned preference needs it)")
    return sherliic_splits(path)[0]


@register(
    "w2v+tsg_rel_emb (learned)",
    tunable=True,
    description="w2v + typed or untyped rel emb per type signature (preference learned on our dev)",
)
def w2v_tsg_rel_emb_learned(items: pd.DataFrame, ctx: Context) -> pd.Series:
    key = ("tsg_preference_learned", ctx.target)
    if key not in ctx.cache:
        train = sherliic_dev_training_items(ctx)
        w2v = word_vector_scores(train, ctx)
        typed = combine(w2v, relation_cosines(train, ctx, "typed"))
        untyped = combine(w2v, relation_cosines(train, ctx, "untyped"))
        ctx.cache[key] = learn_preference(train, typed, untyped)
    return tsg_scores(items, ctx, ctx.cache[key])
