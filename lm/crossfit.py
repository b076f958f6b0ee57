"""Cross-fitting: which models score which items, so that no item is scored by a model that learnt from it,
and each item is scored by a model that has seen as much of it as the test items' model has of them.

The labelled pool of a benchmark (evaluation.datasets.folds.pool_mask: SherLIiC dev, Levy/Holt train+dev)
is split into k folds (evaluation.datasets.folds: test-matched `tm` by default, predicate-disjoint `pd`,
LM_FOLD_SCHEME). Fold f's model trains on the pool items outside fold f that touch none of its hidden
predicates (and on the extra training items that touch none) and scores the items of fold f; an item cut
between two folds (`pd` only) is scored by the models of both (the mean), neither of which saw it. The
model trained on the whole pool scores everything else (the test files). Every model of one cross-fit gets
the same recipe (epochs from the size of a fold's training share), so out-of-fold scores and test scores
come from comparable models, and a threshold tuned on the out-of-fold scores can be applied to the test
scores.

A dataset may be scored by another dataset's cross-fit (its `source`): every Levy/Holt subset is a
re-split of Levy/Holt's own train+dev items, so the Levy/Holt models score the subsets' items out of fold
with no training of their own (lm.plan, LM_SCORE_WITH).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation.datasets.folds import CUT, Folds, Profile, fold_profile, item_folds, pool_mask, predicate_keys
from lm.runs import TrainingSet


@dataclass(frozen=True)
class Part:
    """One model of a cross-fit: what it trains on and which items (index of the scored frame) it scores.
    `fold` None is the model of the whole pool."""

    training: TrainingSet
    index: pd.Index
    fold: int | None
    n_nominal: int  # the training size the recipe's epochs are computed from (the same for every part)


def _norm(text: object) -> str:
    return " ".join(str(text).lower().split())


def pair_keys(items: pd.DataFrame) -> pd.Series:
    """The (premise, hypothesis) text pair of each item, normalized (matches an item across datasets)."""
    return items["premise_text"].map(_norm) + "\t" + items["hypothesis_text"].map(_norm)


def training_set(items: pd.DataFrame, description: str) -> TrainingSet:
    return TrainingSet(
        premises=items["premise_text"].astype(str).tolist(),
        hypotheses=items["hypothesis_text"].astype(str).tolist(),
        labels=items["label"].astype(bool).tolist(),
        description=f"{description} ({len(items)} items)",
    )


def _stable_order(items: pd.DataFrame) -> pd.DataFrame:
    """The items in an order fixed by their content (a deterministic sample of any size: its head)."""
    digest = (pair_keys(items) + "\t" + items["label"].astype(str)).map(
        lambda k: hashlib.sha1(k.encode()).hexdigest()
    )
    return items.iloc[digest.argsort(kind="stable").to_numpy()]


@dataclass(frozen=True)
class CrossFit:
    """The cross-fit of one source pool (plus extra training items) over the items it scores."""

    source: str
    pool: pd.DataFrame  # the source's labelled pool
    folds: Folds  # aligned with pool's rows
    extra: pd.DataFrame  # more training items (other benchmarks' pools), capped at the pool's size

    @classmethod
    def of(
        cls,
        source: str,
        source_items: pd.DataFrame,
        extra: pd.DataFrame | None,
        k: int,
        scheme: str = "tm",
    ) -> CrossFit:
        pool = source_items[pool_mask(source_items)]
        extra = extra[pool_mask(extra)] if extra is not None else pool.iloc[:0]  # never a test file
        return cls(source, pool, item_folds(pool, k, scheme), extra)

    @property
    def n_nominal(self) -> int:
        """A fold's training share of the pool: the epochs of every model of this cross-fit follow it."""
        k = self.folds.k
        return max(1, round(len(self.pool) * (k - 1) / k))

    def _training(self, keep: pd.Series, extra_keep: pd.Series, description: str) -> TrainingSet:
        train = self.pool[keep.to_numpy()]
        extra = _stable_order(self.extra[extra_keep.to_numpy()]).head(len(train))
        parts = [train] + ([extra] if len(extra) else [])
        note = f" + {len(extra)} of {', '.join(sorted(set(extra['dataset'])))}" if len(extra) else ""
        return training_set(pd.concat(parts), f"{description}{note}")

    def pool_rows(self, scored: pd.DataFrame) -> pd.Series:
        """The pool row (position) of each scored item, matched by its text pair; NaN outside the pool."""
        position = {}
        for i, key in enumerate(pair_keys(self.pool)):
            position.setdefault(key, i)
        return pair_keys(scored).map(position)

    def parts(self, scored: pd.DataFrame) -> list[Part]:
        """The models that score `scored` (items of any split, this source's or a dataset it serves)."""
        if self.pool.empty:
            return []
        k, n = self.folds.k, self.n_nominal
        pool_premise, pool_hypothesis = predicate_keys(self.pool)
        extra_premise, extra_hypothesis = predicate_keys(self.extra)
        where = self.pool_rows(scored)
        inside = where.notna()
        rows = where[inside].astype(int).to_numpy()
        folds_of = self.folds.of_item[rows]
        scored_premise, scored_hypothesis = pool_premise.iloc[rows], pool_hypothesis.iloc[rows]
        parts = []
        for f in range(k):
            held = self.folds.predicates(f)
            cut_here = (scored_premise.isin(held) | scored_hypothesis.isin(held)).to_numpy()
            hit = (folds_of == f) | ((folds_of == CUT) & cut_here)
            index = scored.index[inside.to_numpy()][hit]
            if len(index) == 0:
                continue
            keep = pd.Series(self.folds.training(f, pool_premise, pool_hypothesis), index=self.pool.index)
            extra_keep = ~(extra_premise.isin(held) | extra_hypothesis.isin(held))
            description = f"{self.source} pool without fold {f + 1}/{k}"
            parts.append(Part(self._training(keep, extra_keep, description), index, f, n))
        outside = scored.index[~inside.to_numpy()]
        if len(outside):
            parts.append(Part(self.full_training(), outside, None, n))
        return parts

    def full_training(self) -> TrainingSet:
        """The training items of the model of the whole pool (the one that scores unseen pairs)."""
        everything = pd.Series(True, index=self.pool.index)
        extra_all = pd.Series(True, index=self.extra.index)
        return self._training(everything, extra_all, f"{self.source} pool (all)")

    def fold_of(self, scored: pd.DataFrame) -> pd.Series:
        """The fold of each scored item in this cross-fit (CUT for an item between two folds, and for an
        item outside the pool): the folds of the honest evaluation (lm.selection)."""
        where = self.pool_rows(scored)
        out = pd.Series(CUT, index=scored.index, dtype=int)
        inside = where.notna()
        out[inside] = self.folds.of_item[where[inside].astype(int).to_numpy()]
        return out

    def profile(self, scored: pd.DataFrame) -> Profile:
        """The overlap profile of the scored items that are pool items (e.g. a subset's) against the pool
        items that train their fold's model (evaluation.datasets.folds.fold_profile)."""
        among = np.zeros(len(self.pool), dtype=bool)
        among[self.pool_rows(scored).dropna().astype(int).to_numpy()] = True
        premises, hypotheses = predicate_keys(self.pool)
        return fold_profile(list(premises), list(hypotheses), self.folds, among)
