"""Cross-validation folds of a benchmark's labelled pool, in which a fold's model has seen as much of the
items it scores as the benchmark's test items are seen by the model of the whole pool.

A model trained on the pool (SherLIiC: dev; Levy/Holt and each subset: train + dev) scores the held-out
test, whose items share predicates with the pool in a way each benchmark fixes: its *overlap profile*, the
share of test items whose unordered (premise, hypothesis) predicate pair is a training item's (`pair`),
whose two predicates both occur in training items (`both`), at least one (`any`). Folds that share more
(Levy/Holt's own dev split: 34.5 % pair) reward memorising; folds that share nothing undervalue what a
model learns about seen predicates. Two schemes (SCHEMES):

  tm  test-matched: the folds' pooled profile (each fold's items against its model's training items)
      matches TEST_PROFILES within a few points. The predicates are agglomerated into small communities;
      the largest communities, up to a share s of the items, are held out whole: dealt into folds, and
      their predicates hidden from that fold's training items (their items are seen by no predicate). The
      other items are dealt by unordered predicate pair (a pair and its reverse stay in one fold), each
      into the fold holding the fewest items of its predicates, so that their predicates are seen as in
      leave-one-out. s is searched on a grid for the profile closest to the benchmark's test profile
      (SherLIiC: s = 0; Levy/Holt: about a third). Every item is evaluated once.
  pd  predicate-disjoint: items sharing a premise or hypothesis predicate never fall into two folds (the
      strict view: profile 0 / 0 / 0). The predicate graph (a node per predicate, an edge per item) has
      one giant component (Levy/Holt train+dev: 5,469 of 5,486 items; SherLIiC dev: 785 of 996), so
        1. agglomerate: merge the two predicate groups with the strongest link (items between them per
           product of their sizes) while the merged group stays under a cap (CAP_SHARE of a fold);
        2. deal the groups into k folds, largest first, each into the lightest fold;
        3. refine: move single predicates to the fold holding most of their items while that cuts fewer
           items and keeps every fold within BALANCE of n / k.
      An item whose two predicates end up in different folds is "cut" (fold -1): it is never evaluated,
      and a fold's model never trains on an item touching a predicate of that fold.

Everything is deterministic and independent of the item order (sorted orders, hashes of the predicate
strings). Figures on the shared data: docs/lm.md.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

K_FOLDS = 5
CUT = -1  # the fold of an item whose predicates lie in two folds
CAP_SHARE = 0.5  # largest agglomerated group, as a share of a fold's items (0.25: more cut, 1: unbalanced)
BALANCE = 0.10  # refinement keeps every fold within n/k * (1 ± BALANCE) (where it started inside)
SCHEMES = ("tm", "pd")  # test-matched, predicate-disjoint
SPLITS = {"tm": "tm_cv", "pd": "pd_cv"}  # the split name of each scheme's out-of-fold figures
COMMUNITY_SHARE = 1 / 16  # tm: largest community, as a share of a fold's items
SEARCH_STEPS = (0.05, 0.01)  # tm: the held-out share is searched on a grid of 0.05, then 0.01 around the best


@dataclass(frozen=True)
class Profile:
    """How much of the evaluated items their model's training items have seen, in % of the items: the
    unordered predicate pair (`pair`), both predicates (`both`), at least one (`any`)."""

    pair: float
    both: float
    any: float

    def distance(self, other: Profile) -> float:
        return max(abs(self.pair - other.pair), abs(self.both - other.both), abs(self.any - other.any))

    def __str__(self) -> str:
        return f"{self.pair:.1f} / {self.both:.1f} / {self.any:.1f} %"


# Each held-out test against the pool that trains its model, measured on the test files by the benchmarks'
# keepers (the test files are not shared): SherLIiC test (2,989) vs SherLIiC dev (996); Levy/Holt test
# (12,921, Li et al. 2022's split) vs Levy/Holt train + dev (5,486). A subset's items are Levy/Holt's.
TEST_PROFILES = {"sherliic": Profile(1.9, 58.3, 92.5), "levy_holt": Profile(0.3, 9.5, 49.5)}


def target_profile(dataset: str) -> Profile | None:
    """The test profile the tm folds of `dataset`'s pool match (None: no test profile known)."""
    family = "levy_holt" if dataset.startswith("levy_holt/") else dataset
    return TEST_PROFILES.get(family)


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
    """Which fold evaluates each item (CUT = -1: none) and, per fold, the predicates that no training item
    of that fold's model touches. A fold's model trains on the items outside the fold that touch none of
    its hidden predicates (Folds.training)."""

    of_item: np.ndarray
    hidden: tuple[frozenset[str], ...]
    scheme: str = "pd"  # SCHEMES
    share: float = 1.0  # tm: the share of the items in held-out communities (pd: every predicate held)

    @property
    def k(self) -> int:
        return len(self.hidden)

    def predicates(self, fold: int) -> frozenset[str]:
        return self.hidden[fold]

    def training(self, fold: int, premises: pd.Series, hypotheses: pd.Series) -> np.ndarray:
        """The items (given by their predicates, aligned with of_item) that train fold `fold`'s model."""
        held = self.hidden[fold]
        touches = (premises.isin(held) | hypotheses.isin(held)).to_numpy()
        return (self.of_item != fold) & ~touches

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


def _graph(premises: Sequence[str], hypotheses: Sequence[str]) -> tuple[Counter, Counter]:
    """The predicate graph: (items per predicate, an item counting half for each of its predicates;
    items per unordered pair of distinct predicates)."""
    weight: Counter = Counter()
    edges: Counter = Counter()
    for p, h in zip(premises, hypotheses, strict=True):
        weight[p] += 0.5
        weight[h] += 0.5
        if p != h:
            edges[(min(p, h), max(p, h))] += 1
    return weight, edges


def predicate_folds(premises: Sequence[str], hypotheses: Sequence[str], k: int = K_FOLDS) -> Folds:
    """k predicate-disjoint folds of the items given by their premise and hypothesis predicates."""
    premises, hypotheses = [str(p) for p in premises], [str(h) for h in hypotheses]
    weight, edges = _graph(premises, hypotheses)
    n = float(len(premises))
    if not premises:
        return Folds(np.array([], dtype=int), tuple(frozenset() for _ in range(k)), "pd")
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
    hidden = tuple(frozenset(p for p, f in fold.items() if f == i) for i in range(k))
    return Folds(of_item, hidden, "pd")


def _stable_order(key: str) -> str:
    return hashlib.sha1(key.encode()).hexdigest()


def _held_out_folds(
    premises: tuple[str, ...],
    hypotheses: tuple[str, ...],
    k: int,
    community: dict[str, str],
    weight: Counter,
    share: float,
) -> Folds:
    """The tm folds that hold out the largest communities up to `share` of the items (module doc)."""
    n = len(premises)
    held, total = [], 0.0
    for c in sorted(weight, key=lambda c: (-weight[c], c)):
        if total + weight[c] / 2 > share * n:
            break
        held.append(c)
        total += weight[c]
    load = [0.0] * k
    fold_of_community = {}
    for c in held:  # largest first, each into the lightest fold
        f = min(range(k), key=lambda i: (load[i], i))
        fold_of_community[c] = f
        load[f] += weight[c]
    fold_of = {p: fold_of_community[c] for p, c in community.items() if c in fold_of_community}
    hidden = [set() for _ in range(k)]
    for p, f in fold_of.items():
        hidden[f].add(p)
    of_item = np.full(n, CUT, dtype=int)
    load = [0.0] * k
    rest = defaultdict(list)  # unordered predicate pair -> its items not in a held-out community
    for i, (p, h) in enumerate(zip(premises, hypotheses, strict=True)):
        f = fold_of.get(p, fold_of.get(h))
        if f is None:
            rest[(min(p, h), max(p, h))].append(i)
        else:
            of_item[i] = f
            load[f] += 1
    seen: Counter = Counter()  # (predicate, fold) -> items
    for pair in sorted(rest, key=lambda pair: _stable_order("\t".join(pair))):
        items, predicates = rest[pair], set(pair)
        room = [f for f in range(k) if load[f] < n / k] or list(range(k))
        f = min(
            room,
            key=lambda f: (
                sum(p in hidden[f] for p in predicates),
                sum(seen[p, f] for p in predicates),
                load[f],
                f,
            ),
        )
        of_item[items] = f
        load[f] += len(items)
        for p in predicates:
            seen[p, f] += len(items)
    return Folds(of_item, tuple(frozenset(h) for h in hidden), "tm", share)


@lru_cache(maxsize=8)
def _matched(premises: tuple[str, ...], hypotheses: tuple[str, ...], k: int, target: Profile | None) -> Folds:
    weight, edges = _graph(premises, hypotheses)
    community = _agglomerate(edges, weight, cap=max(1.0, COMMUNITY_SHARE * len(premises) / k))
    community_weight: Counter = Counter()
    for p, c in community.items():
        community_weight[c] += weight[p]
    if target is None:
        return _held_out_folds(premises, hypotheses, k, community, community_weight, 0.0)
    names = {name: i for i, name in enumerate(sorted(community))}
    codes = np.array([names[p] for p in premises]), np.array([names[h] for h in hypotheses])
    tried: dict[float, tuple[float, Folds]] = {}
    low, high, best = 0.0, 1.0, 0.0
    for step in SEARCH_STEPS:  # coarse, then fine around the best share
        for i in range(round((high - low) / step) + 1):
            share = round(low + i * step, 4)
            if share not in tried:
                folds = _held_out_folds(premises, hypotheses, k, community, community_weight, share)
                tried[share] = (_profile(*codes, folds, names).distance(target), folds)
        best = min(tried, key=lambda s: (tried[s][0], s))
        low, high = max(0.0, best - step + SEARCH_STEPS[-1]), min(1.0, best + step - SEARCH_STEPS[-1])
    return tried[best][1]


def matched_folds(
    premises: Sequence[str], hypotheses: Sequence[str], k: int = K_FOLDS, target: Profile | None = None
) -> Folds:
    """k test-matched folds whose profile is closest to `target` (module doc); none: s = 0."""
    premises, hypotheses = tuple(str(p) for p in premises), tuple(str(h) for h in hypotheses)
    if not premises:
        return Folds(np.array([], dtype=int), tuple(frozenset() for _ in range(k)), "tm", 0.0)
    return _matched(premises, hypotheses, k, target)


def fold_profile(
    premises: Sequence[str], hypotheses: Sequence[str], folds: Folds, among: np.ndarray | None = None
) -> Profile:
    """The folds' pooled profile: each evaluated item (`among` them, a mask; default all) against the
    training items of its fold's model."""
    names = {name: i for i, name in enumerate(sorted(set(map(str, premises)) | set(map(str, hypotheses))))}
    codes = np.array([names[str(p)] for p in premises]), np.array([names[str(h)] for h in hypotheses])
    return _profile(*codes, folds, names, among)


def _profile(
    p: np.ndarray, h: np.ndarray, folds: Folds, names: dict[str, int], among: np.ndarray | None = None
) -> Profile:
    """fold_profile on predicate codes (names: predicate -> code)."""
    among = np.ones(len(p), dtype=bool) if among is None else np.asarray(among, dtype=bool)
    n = len(names)
    pair = np.minimum(p, h) * n + np.maximum(p, h)
    counts = np.zeros(3)
    for f in range(folds.k):
        hidden = np.zeros(n, dtype=bool)
        hidden[[names[x] for x in folds.hidden[f] if x in names]] = True
        train = (folds.of_item != f) & ~hidden[p] & ~hidden[h]
        scored = (folds.of_item == f) & among
        seen = np.zeros(n, dtype=bool)
        seen[p[train]] = seen[h[train]] = True
        counts += [
            np.isin(pair[scored], pair[train]).sum(),
            (seen[p[scored]] & seen[h[scored]]).sum(),
            (seen[p[scored]] | seen[h[scored]]).sum(),
        ]
    share = 100 * counts / max(1, int(((folds.of_item >= 0) & among).sum()))
    return Profile(*(round(float(v), 1) for v in share))


def item_folds(items: pd.DataFrame, k: int = K_FOLDS, scheme: str = "tm") -> Folds:
    """The folds of these items (one benchmark's pool), aligned with their rows: test-matched to the
    benchmark's test profile (`tm`), or predicate-disjoint (`pd`)."""
    premises, hypotheses = predicate_keys(items)
    if scheme == "pd":
        return predicate_folds(list(premises), list(hypotheses), k)
    if scheme != "tm":
        raise ValueError(f"unknown fold scheme {scheme!r}; known: {', '.join(SCHEMES)}")
    dataset = str(items["dataset"].iloc[0]) if len(items) and "dataset" in items else ""
    return matched_folds(list(premises), list(hypotheses), k, target_profile(dataset))


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
