"""Predicate-disjoint folds: cross-validation in which no predicate is on both sides.

Why: 34.5 % of the Levy/Holt dev items have their (premise, hypothesis) predicate pair among the train
items and 46.3 % share both predicates with them (test: 0.3 % and 8.7 %), so a model selected on that dev
split is rewarded for remembering predicate pairs (docs/lm.md, "Honest selection"). Here the labelled
pool of a benchmark (SherLIiC: dev; Levy/Holt and each subset: train + dev) is split so that items sharing
a premise or hypothesis predicate never fall into two different folds.

The predicate graph has one node per predicate and one edge per item (premise predicate - hypothesis
predicate). Its connected components could simply be dealt into k folds, but both benchmarks have a giant
component (Levy/Holt train+dev: 5,469 of 5,486 items; SherLIiC dev: 785 of 996), so the predicates are
partitioned instead:
  1. agglomerate: merge the two predicate groups with the strongest link (items between them per product
     of their sizes) while the merged group stays under a cap (CAP_SHARE of a fold);
  2. deal the groups into k folds, largest first, each into the lightest fold;
  3. refine: move single predicates to the fold holding most of their items while that cuts fewer items
     and keeps every fold within BALANCE of n / k.
An item whose two predicates end up in different folds is "cut" (fold -1): it is never evaluated, and a
fold's model never trains on an item touching a predicate of that fold. Everything is deterministic
(sorted orders, ties broken by the predicate string). On the shared data: Levy/Holt train+dev 5 folds of
~1,000 items, ~6.8 % cut; SherLIiC dev (docs/lm.md).
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

K_FOLDS = 5
CUT = -1  # the fold of an item whose predicates lie in two folds
CAP_SHARE = 0.5  # largest agglomerated group, as a share of a fold's items (0.25: more cut, 1: unbalanced)
BALANCE = 0.10  # refinement keeps every fold within n/k * (1 ± BALANCE) (where it started inside)


def _norm(text: object) -> str:
    return " ".join(str(text).lower().split())


def predicate_keys(items: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The premise and hypothesis predicate of each item: SherLIiC's relation paths; the triple middles
    of Levy/Holt (lower-cased, as written: the overlap figures of docs/lm.md count these), their parsed
    paths where a middle is missing; else the whole sentence (an item without a predicate of its own)."""
    dataset = items["dataset"].astype(str) if "dataset" in items else pd.Series("", index=items.index)
    sherliic = dataset.eq("sherliic")

    def text(column: str) -> pd.Series:
        if column not in items:
            return pd.Series([None] * len(items), index=items.index, dtype=object)
        return items[column].map(lambda v: _norm(v) if isinstance(v, str) and v.strip() else None)

    def side(name: str) -> pd.Series:
        path, middle = text(f"{name}_path"), text(f"{name}_middle")
        keys = path.where(sherliic, middle)
        keys = keys.where(keys.notna(), middle.where(sherliic, path))
        return keys.where(keys.notna(), "text:" + items[f"{name}_text"].map(_norm))

    return side("premise"), side("hypothesis")


def pool_mask(items: pd.DataFrame) -> pd.Series:
    """The labelled pool of each item's benchmark, the items a model may learn from: SherLIiC's dev file,
    the train and dev files of Levy/Holt and of its subsets; never a test file."""
    dataset = items["dataset"].astype(str)
    split = items["split"].astype(str)
    sherliic = (dataset == "sherliic") & (split == "dev")
    levy_holt = dataset.str.startswith("levy_holt") & ~dataset.str.startswith("levy_holt_hosseini")
    return sherliic | (levy_holt & split.isin(["train", "dev"]))


@dataclass(frozen=True)
class Folds:
    """Fold of each item (CUT = -1 for an item between two folds) and fold of each predicate."""

    of_item: np.ndarray
    of_predicate: dict[str, int]
    k: int

    def held_out(self, fold: int) -> np.ndarray:
        return self.of_item == fold

    def predicates(self, fold: int) -> set[str]:
        return {p for p, f in self.of_predicate.items() if f == fold}

    def sizes(self) -> list[int]:
        return [int((self.of_item == f).sum()) for f in range(self.k)]

    @property
    def n_cut(self) -> int:
        return int((self.of_item == CUT).sum())


def _agglomerate(edges: Counter, weight: Counter, cap: float) -> dict[str, str]:
    """Predicate -> its group's representative, after merging the most strongly linked groups (links per
    product of sizes) as long as the merged group stays under `cap` items."""
    adjacent: dict[str, Counter] = defaultdict(Counter)
    for (a, b), n in edges.items():
        adjacent[a][b] += n
        adjacent[b][a] += n
    size = dict(weight)
    members = {p: [p] for p in weight}  # representative -> its predicates

    def strength(a: str, b: str) -> float:
        return adjacent[a][b] / (size[a] * size[b])

    heap = [(-strength(a, b), a, b) for a in sorted(adjacent) for b in sorted(adjacent[a]) if a < b]
    heapq.heapify(heap)
    while heap:
        s, a, b = heapq.heappop(heap)
        if a not in members or b not in members or b not in adjacent[a] or -s != strength(a, b):
            continue  # stale: one of the groups changed since this entry was pushed
        if size[a] + size[b] > cap:
            continue
        for n, links in adjacent.pop(b).items():  # b joins a
            del adjacent[n][b]
            if n != a:
                adjacent[a][n] += links
                adjacent[n][a] += links
        size[a] += size.pop(b)
        members[a] += members.pop(b)
        for n in sorted(adjacent[a]):
            heapq.heappush(heap, (-strength(a, n), min(a, n), max(a, n)))
    return {p: rep for rep, ps in members.items() for p in ps}


def _refine(fold: dict[str, int], edges: Counter, weight: Counter, k: int, n: float) -> None:
    """Move single predicates to where most of their items are, while the cut shrinks and the folds stay
    balanced (in place)."""
    adjacent: dict[str, Counter] = defaultdict(Counter)
    for (a, b), links in edges.items():
        adjacent[a][b] += links
        adjacent[b][a] += links
    load = [0.0] * k
    for p, f in fold.items():
        load[f] += weight[p]
    high, low = n / k * (1 + BALANCE), n / k * (1 - BALANCE)
    for _ in range(50):
        moved = False
        for p in sorted(adjacent):
            here, links = fold[p], Counter()
            for q, m in adjacent[p].items():
                links[fold[q]] += m
            best, gain = here, 0
            for f in range(k):
                g = links[f] - links[here]
                if f != here and g > gain and load[f] + weight[p] <= high and load[here] - weight[p] >= low:
                    best, gain = f, g
            if best != here:
                load[here] -= weight[p]
                load[best] += weight[p]
                fold[p] = best
                moved = True
        if not moved:
            return


def predicate_folds(premises: Sequence[str], hypotheses: Sequence[str], k: int = K_FOLDS) -> Folds:
    """k predicate-disjoint folds of the items given by their premise and hypothesis predicates."""
    premises, hypotheses = [str(p) for p in premises], [str(h) for h in hypotheses]
    weight: Counter = Counter()
    edges: Counter = Counter()
    for p, h in zip(premises, hypotheses, strict=True):
        weight[p] += 0.5
        weight[h] += 0.5
        if p != h:
            edges[(min(p, h), max(p, h))] += 1
    n = float(len(premises))
    if not premises:
        return Folds(np.array([], dtype=int), {}, k)
    group = _agglomerate(edges, weight, cap=max(1.0, CAP_SHARE * n / k))
    group_weight: Counter = Counter()
    for p, g in group.items():
        group_weight[g] += weight[p]
    load, fold_of_group = [0.0] * k, {}
    for g, w in sorted(group_weight.items(), key=lambda gw: (-gw[1], gw[0])):
        f = min(range(k), key=lambda i: (load[i], i))
        fold_of_group[g] = f
        load[f] += w
    fold = {p: fold_of_group[group[p]] for p in weight}
    _refine(fold, edges, weight, k, n)
    of_item = np.array(
        [fold[p] if fold[p] == fold[h] else CUT for p, h in zip(premises, hypotheses, strict=True)], dtype=int
    )
    return Folds(of_item, fold, k)


def item_folds(items: pd.DataFrame, k: int = K_FOLDS) -> Folds:
    """Predicate-disjoint folds of these items (e.g. one benchmark's pool), aligned with their rows."""
    premises, hypotheses = predicate_keys(items)
    return predicate_folds(list(premises), list(hypotheses), k)


def overlap(train: pd.DataFrame, evaluated: pd.DataFrame) -> dict[str, float]:
    """How much of `evaluated` a model trained on `train` has seen, in % of the evaluated items:
    `pair` its unordered (premise, hypothesis) predicate pair is a training item's; `both` both its
    predicates occur in training items; `any` at least one does."""
    tp, th = predicate_keys(train)
    ep, eh = predicate_keys(evaluated)
    seen = set(tp) | set(th)
    pairs = {frozenset(x) for x in zip(tp, th, strict=True)}
    n = max(1, len(evaluated))

    def share(flags: Iterable[bool]) -> float:
        return round(100 * sum(flags) / n, 1)

    return {
        "items": len(evaluated),
        "pair": share(frozenset(x) in pairs for x in zip(ep, eh, strict=True)),
        "both": share(p in seen and h in seen for p, h in zip(ep, eh, strict=True)),
        "any": share(p in seen or h in seen for p, h in zip(ep, eh, strict=True)),
    }
