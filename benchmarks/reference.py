"""Independent plain-Python reference of docs/design.md §4–§5 (typing, Relv, σ, esr, InfCands).

Written from the design only (not from the dbt models) so that the SQL marts can be checked against it.
The approach is the entailment-graph codes': an in-memory inverted index over entity pairs.

- Untyped relation R = set of (arg1, arg2) entity pairs of one canonical path (set semantics).
- E = distinct entities of the whole untyped graph; |E×E| = |E|².
- Slot types: rank types t by |{p ∈ R : t ∈ τ(πᵢ(p))}|, keep the top k, ties by type name (ascending);
  fewer than k types in the slot → ⊤ is added (⊤ matches every entity, typed or not).
- Typed subrelation R_{s,u} for s, u among the slot candidates, kept if |R_{s,u}| ≥ r_min.
- tsg(T) per slot = ∩ τ(e) over the slot's entities; empty → {⊤}; ⊤ is compatible with every type.
- Straight A(x,y) ⇒ B(x,y): A∩B = pairs of A that are in B. Crossed A(x,y) ⇒ B(y,x): pairs (x,y) of A
  with (y,x) in B (reported in A's orientation, so π₁ are A's first arguments); tsg compatibility of a
  crossed rule compares A's slot 1 with B's slot 2 and A's slot 2 with B's slot 1.
- Relv = |A∩B|·|E|²/(|A|·|B|); σ = 2|A∩B|·Σ_{H∈{B,¬B}} P(H|A)·log Relv(A,H), natural log, a term with
  P(H|A) = 0 contributes 0; esr = |π₁(A∩B) ∪ π₂(A∩B)| / (2|A∩B|).
- Per hypothesis B: premises ranked by Relv·σ·esr, premises with B's path dropped (they differ only in
  types; a relation is never compared with itself), best top_n kept. Ties in the score are ordered by
  the premise's (path, type_a, type_b, alignment) so the ranking is deterministic.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from teg.scores import esr, relv, sigma
from warehouse.target import Target

TOP = "⊤"
SHIFT = 32  # pair key = (arg1 << SHIFT) | arg2 over interned entity numbers
MASK = (1 << SHIFT) - 1


@dataclass(frozen=True)
class Params:
    """The paper's thresholds (the dbt vars of the same names)."""

    top_k_types: int = 5
    r_min: int = 5
    min_relv: float = 1000.0
    min_sigma: float = 15.0
    min_esr: float = 0.6
    top_n_premises: int = 100

    @classmethod
    def from_vars(cls, dbt_vars: Mapping | None) -> Params:
        fields = cls.__dataclass_fields__
        return cls(**{k: v for k, v in (dbt_vars or {}).items() if k in fields})


@dataclass
class TypedRelation:
    path: str
    type_a: str
    type_b: str
    pairs: frozenset[int]
    tsg_a: frozenset[str]
    tsg_b: frozenset[str]


@dataclass
class ReferenceResult:
    n_entities: int
    typed_relations: pd.DataFrame
    inference_candidates: pd.DataFrame
    timings: dict[str, float] = field(default_factory=dict)


def slot_candidates(counts: Counter, k: int) -> list[str]:
    """Top-k types by count, ties by type name; ⊤ added when fewer than k types occur."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:k]
    names = [t for t, _ in ranked]
    if len(names) < k:
        names.append(TOP)
    return names


def tsg_compatible(x: frozenset[str], y: frozenset[str]) -> bool:
    return TOP in x or TOP in y or not x.isdisjoint(y)


class Reference:
    """Build typed relations and InfCands from (path, arg1, arg2) rows and an entity → types map."""

    def __init__(self, params: Params | None = None) -> None:
        self.params = params or Params()
        self.entity_index: dict[str, int] = {}
        self.entity_names: list[str] = []
        self.relations: dict[str, set[int]] = defaultdict(set)
        self.types: list[frozenset[str]] = []
        self.timings: dict[str, float] = {}

    def _entity(self, name: str) -> int:
        idx = self.entity_index.get(name)
        if idx is None:
            idx = len(self.entity_names)
            self.entity_index[name] = idx
            self.entity_names.append(name)
        return idx

    def add_instances(self, rows: Iterable[tuple[str, str, str]]) -> None:
        ent = self._entity
        rels = self.relations
        for path, a1, a2 in rows:
            rels[path].add((ent(a1) << SHIFT) | ent(a2))

    def set_types(self, entity_types: Mapping[str, Iterable[str]]) -> None:
        empty: frozenset[str] = frozenset()
        self.types = [frozenset(entity_types.get(name, empty)) for name in self.entity_names]

    # -- §4 typing ---------------------------------------------------------------------------------
    def typed_relations(self) -> list[TypedRelation]:
        k, r_min = self.params.top_k_types, self.params.r_min
        types = self.types
        out: list[TypedRelation] = []
        for path in sorted(self.relations):
            pairs = self.relations[path]
            if len(pairs) < r_min:
                continue
            slot1, slot2 = Counter(), Counter()
            for p in pairs:
                slot1.update(types[p >> SHIFT])
                slot2.update(types[p & MASK])
            cands1 = slot_candidates(slot1, k)
            cands2 = slot_candidates(slot2, k)
            by1 = {s: {p for p in pairs if s in types[p >> SHIFT]} if s != TOP else pairs for s in cands1}
            by2 = {u: {p for p in pairs if u in types[p & MASK]} if u != TOP else pairs for u in cands2}
            for s in cands1:
                for u in cands2:
                    members = by1[s] & by2[u]
                    if len(members) >= r_min:
                        out.append(
                            TypedRelation(
                                path,
                                s,
                                u,
                                frozenset(members),
                                self._tsg({p >> SHIFT for p in members}),
                                self._tsg({p & MASK for p in members}),
                            )
                        )
        return out

    def _tsg(self, entities: set[int]) -> frozenset[str]:
        common: frozenset[str] | None = None
        for e in entities:
            common = self.types[e] if common is None else common & self.types[e]
            if not common:
                return frozenset({TOP})
        return common or frozenset({TOP})

    # -- §5 candidates ---------------------------------------------------------------------------
    def candidates(self, typed: list[TypedRelation]) -> list[dict]:
        prm = self.params
        r_min = prm.r_min
        n_ent = len(self.entity_names)
        typed_by_path: dict[str, list[TypedRelation]] = defaultdict(list)
        for t in typed:
            typed_by_path[t.path].append(t)
        paths = sorted(typed_by_path)
        rel_no = {p: i for i, p in enumerate(paths)}
        # Inverted index: pair -> relations (only relations that have typed subrelations matter).
        postings: dict[int, list[int]] = defaultdict(list)
        for path in paths:
            i = rel_no[path]
            for p in self.relations[path]:
                postings[p].append(i)
        accepted: list[dict] = []
        for path_a in paths:
            i = rel_no[path_a]
            pairs_a = self.relations[path_a]
            straight: Counter = Counter()
            crossed: Counter = Counter()
            for p in pairs_a:
                straight.update(postings.get(p, ()))
                crossed.update(postings.get(((p & MASK) << SHIFT) | (p >> SHIFT), ()))
            for alignment, counter in (("straight", straight), ("crossed", crossed)):
                for j, count in counter.items():
                    if j == i or count < r_min:
                        continue
                    path_b = paths[j]
                    accepted.extend(
                        self._typed_pairs(typed_by_path[path_a], typed_by_path[path_b], alignment, n_ent)
                    )
        return self._rank(accepted)

    def _typed_pairs(
        self, typed_a: list[TypedRelation], typed_b: list[TypedRelation], alignment: str, n_ent: int
    ) -> list[dict]:
        prm = self.params
        r_min = prm.r_min
        crossed = alignment == "crossed"
        pairs_a_all = self.relations[typed_a[0].path]
        pairs_b_all = self.relations[typed_b[0].path]
        if crossed:
            overlap = {p for p in pairs_a_all if (((p & MASK) << SHIFT) | (p >> SHIFT)) in pairs_b_all}
        else:
            overlap = pairs_a_all & pairs_b_all
        out: list[dict] = []
        for a in typed_a:
            overlap_a = overlap & a.pairs
            if len(overlap_a) < r_min:
                continue
            for b in typed_b:
                if crossed:
                    if not (tsg_compatible(a.tsg_a, b.tsg_b) and tsg_compatible(a.tsg_b, b.tsg_a)):
                        continue
                    both = [p for p in overlap_a if (((p & MASK) << SHIFT) | (p >> SHIFT)) in b.pairs]
                else:
                    if not (tsg_compatible(a.tsg_a, b.tsg_a) and tsg_compatible(a.tsg_b, b.tsg_b)):
                        continue
                    both = [p for p in overlap_a if p in b.pairs]
                o = len(both)
                if o < r_min:
                    continue
                left = {p >> SHIFT for p in both}
                right = {p & MASK for p in both}
                if len(left) < r_min or len(right) < r_min:
                    continue
                size_a, size_b = len(a.pairs), len(b.pairs)
                rv = relv(o, size_a, size_b, n_ent)
                if rv < prm.min_relv:
                    continue
                sg = sigma(o, size_a, size_b, n_ent)
                if sg < prm.min_sigma:
                    continue
                er = esr(len(left | right), o)
                if er < prm.min_esr:
                    continue
                out.append(
                    {
                        "premise_path": a.path,
                        "premise_type_a": a.type_a,
                        "premise_type_b": a.type_b,
                        "hypothesis_path": b.path,
                        "hypothesis_type_a": b.type_a,
                        "hypothesis_type_b": b.type_b,
                        "alignment": alignment,
                        "premise_size": size_a,
                        "hypothesis_size": size_b,
                        "overlap_size": o,
                        "n_overlap_arg1": len(left),
                        "n_overlap_arg2": len(right),
                        "relv": rv,
                        "sigma": sg,
                        "esr": er,
                        "score": rv * sg * er,
                    }
                )
        return out

    def _rank(self, rows: list[dict]) -> list[dict]:
        by_hyp: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
        for row in rows:
            by_hyp[(row["hypothesis_path"], row["hypothesis_type_a"], row["hypothesis_type_b"])].append(row)
        out: list[dict] = []
        for key in sorted(by_hyp):
            group = sorted(
                by_hyp[key],
                key=lambda r: (
                    -r["score"],
                    r["premise_path"],
                    r["premise_type_a"],
                    r["premise_type_b"],
                    r["alignment"],
                ),
            )
            for rank, row in enumerate(group[: self.params.top_n_premises], start=1):
                row["rank_for_hypothesis"] = rank
                out.append(row)
        return out

    def run(self) -> ReferenceResult:
        start = time.perf_counter()
        typed = self.typed_relations()
        self.timings["typing_s"] = time.perf_counter() - start
        start = time.perf_counter()
        cands = self.candidates(typed)
        self.timings["candidates_s"] = time.perf_counter() - start
        typed_df = pd.DataFrame(
            [
                {
                    "path": t.path,
                    "type_a": t.type_a,
                    "type_b": t.type_b,
                    "n_entity_pairs": len(t.pairs),
                    "tsg_a": sorted(t.tsg_a),
                    "tsg_b": sorted(t.tsg_b),
                }
                for t in typed
            ],
            columns=["path", "type_a", "type_b", "n_entity_pairs", "tsg_a", "tsg_b"],
        )
        cand_df = pd.DataFrame(cands, columns=CANDIDATE_COLUMNS)
        return ReferenceResult(len(self.entity_names), typed_df, cand_df, dict(self.timings))


CANDIDATE_COLUMNS = [
    "premise_path",
    "premise_type_a",
    "premise_type_b",
    "hypothesis_path",
    "hypothesis_type_a",
    "hypothesis_type_b",
    "alignment",
    "premise_size",
    "hypothesis_size",
    "overlap_size",
    "n_overlap_arg1",
    "n_overlap_arg2",
    "relv",
    "sigma",
    "esr",
    "score",
    "rank_for_hypothesis",
]


def compute(
    instances: Iterable[tuple[str, str, str]],
    entity_types: Mapping[str, Iterable[str]],
    params: Params | None = None,
) -> ReferenceResult:
    """Typed relations and InfCands for in-memory rows (path, arg1, arg2) and entity → types."""
    ref = Reference(params)
    ref.add_instances(instances)
    ref.set_types(entity_types)
    return ref.run()


def _copy_rows(conn, query: str) -> Iterable[list[str]]:
    """Rows of a COPY ... TO STDOUT (text format), parsed block-wise (much faster than row objects)."""
    with conn.cursor() as cur, cur.copy(f"copy ({query}) to stdout") as copy:
        rest = b""
        for block in copy:
            data = rest + bytes(block)
            lines = data.split(b"\n")
            rest = lines.pop()
            for line in lines:
                yield _fields(line)
        if rest:
            yield _fields(rest)


_ESCAPES = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r", "\\b": "\b", "\\f": "\f", "\\v": "\v"}
_ESCAPE_RE = re.compile(r"\\[\\tnrbfv]")


def _fields(line: bytes) -> list[str]:
    # COPY's text format escapes backslash and control characters inside values (split first:
    # an escaped tab is two characters and never separates fields).
    fields = line.decode().split("\t")
    return [_ESCAPE_RE.sub(lambda m: _ESCAPES[m.group()], f) if "\\" in f else f for f in fields]


LOADED_INSTANCES = (
    "select ri.path, ri.arg1_entity_id, ri.arg2_entity_id from raw.relation_instances ri "
    "join raw.load_batches b on b.batch_id = ri.batch_id where b.status = 'loaded'"
)
LOADED_TYPES = (
    "select distinct t.entity_id, t.type_name from raw.entity_types t "
    "join raw.load_batches b on b.batch_id = t.batch_id where b.status = 'loaded'"
)


def compute_from_db(target: Target, params: Params | None = None) -> ReferenceResult:
    """Read the Target's raw tables (loaded batches only) and compute the reference."""
    ref = Reference(params)
    start = time.perf_counter()
    with target.connect() as conn:
        ref.add_instances(tuple(row) for row in _copy_rows(conn, LOADED_INSTANCES))
        types: dict[str, set[str]] = defaultdict(set)
        for entity, type_name in _copy_rows(conn, LOADED_TYPES):
            types[entity].add(type_name)
    ref.set_types(types)
    read_s = time.perf_counter() - start
    result = ref.run()
    result.timings["read_s"] = read_s
    return result


# -- comparison with the dbt marts ---------------------------------------------------------------
TYPED_KEY = ["path", "type_a", "type_b"]
CANDIDATE_KEY = [
    "premise_path",
    "premise_type_a",
    "premise_type_b",
    "hypothesis_path",
    "hypothesis_type_a",
    "hypothesis_type_b",
    "alignment",
]
EXACT_CANDIDATE_COLUMNS = [
    "premise_size",
    "hypothesis_size",
    "overlap_size",
    "n_overlap_arg1",
    "n_overlap_arg2",
]
FLOAT_CANDIDATE_COLUMNS = ["relv", "sigma", "esr", "score"]


def read_marts(target: Target) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The Target's typed_relations and inference_candidates marts in the reference's columns."""
    schema = target.marts_schema
    with target.connect() as conn, conn.cursor() as cur:
        cur.execute(
            f"select path, type_a, type_b, n_entity_pairs, tsg_a, tsg_b from {schema}.typed_relations"
        )
        typed = pd.DataFrame(
            cur.fetchall(), columns=["path", "type_a", "type_b", "n_entity_pairs", "tsg_a", "tsg_b"]
        )
        cur.execute(
            "select p.path, p.type_a, p.type_b, h.path, h.type_a, h.type_b, c.alignment, c.premise_size, "
            "c.hypothesis_size, c.overlap_size, c.n_overlap_arg1, c.n_overlap_arg2, c.relv::float8, "
            "c.sigma::float8, c.esr::float8, c.score::float8, c.rank_for_hypothesis "
            f"from {schema}.inference_candidates c "
            f"join {schema}.typed_relations p on p.typed_rel_id = c.premise_typed_rel_id "
            f"join {schema}.typed_relations h on h.typed_rel_id = c.hypothesis_typed_rel_id"
        )
        cands = pd.DataFrame(cur.fetchall(), columns=CANDIDATE_COLUMNS)
    return typed, cands


def _close(x: float, y: float, rel_tol: float) -> bool:
    return math.isclose(x, y, rel_tol=rel_tol, abs_tol=rel_tol)


def compare_with_marts(
    result: ReferenceResult, target: Target, top_type: str = "thing", rel_tol: float = 1e-9
) -> list[str]:
    """Differences between the reference and the dbt marts (empty list = equal).

    Typed relations: same (path, type_a, type_b), sizes and tsg. InfCands: same rules, exact counts,
    Relv/σ/esr/score equal to rel_tol, and the same rank — up to the order inside a group of equal
    scores (the design leaves the tie order open), so a rank is accepted if it lies inside its tie group.
    """
    sql_typed, sql_cands = read_marts(target)
    ref_typed = result.typed_relations.copy()
    ref_cands = result.inference_candidates.copy()

    def spell(value):
        if isinstance(value, list):
            return sorted(top_type if v == TOP else v for v in value)
        return top_type if value == TOP else value

    for col in ["type_a", "type_b", "tsg_a", "tsg_b"]:
        ref_typed[col] = ref_typed[col].map(spell)
    for col in ["premise_type_a", "premise_type_b", "hypothesis_type_a", "hypothesis_type_b"]:
        ref_cands[col] = ref_cands[col].map(spell)
    problems: list[str] = []

    ref_t = {tuple(r[k] for k in TYPED_KEY): r for r in ref_typed.to_dict("records")}
    sql_t = {tuple(r[k] for k in TYPED_KEY): r for r in sql_typed.to_dict("records")}
    for key in sorted(set(ref_t) - set(sql_t))[:20]:
        problems.append(f"typed relation only in reference: {key} size {ref_t[key]['n_entity_pairs']}")
    for key in sorted(set(sql_t) - set(ref_t))[:20]:
        problems.append(f"typed relation only in SQL: {key} size {sql_t[key]['n_entity_pairs']}")
    for key in sorted(set(ref_t) & set(sql_t)):
        r, s = ref_t[key], sql_t[key]
        for col in ["n_entity_pairs", "tsg_a", "tsg_b"]:
            sv = sorted(s[col]) if col.startswith("tsg") else s[col]
            if r[col] != sv:
                problems.append(f"typed relation {key}: {col} reference {r[col]} SQL {sv}")

    ref_c = {tuple(r[k] for k in CANDIDATE_KEY): r for r in ref_cands.to_dict("records")}
    sql_c = {tuple(r[k] for k in CANDIDATE_KEY): r for r in sql_cands.to_dict("records")}
    if len(sql_c) != len(sql_cands):
        problems.append(f"SQL InfCands have duplicate rules ({len(sql_cands)} rows, {len(sql_c)} distinct)")
    for key in sorted(set(ref_c) - set(sql_c))[:20]:
        problems.append(f"InfCand only in reference: {key} score {ref_c[key]['score']}")
    for key in sorted(set(sql_c) - set(ref_c))[:20]:
        problems.append(f"InfCand only in SQL: {key} score {sql_c[key]['score']}")
    # Tie groups: per hypothesis, the ranks spanned by each score value (reference side).
    groups: dict[tuple, dict[float, list[int]]] = defaultdict(lambda: defaultdict(list))
    for key, r in ref_c.items():
        groups[key[3:6]][r["score"]].append(r["rank_for_hypothesis"])
    for key in sorted(set(ref_c) & set(sql_c)):
        r, s = ref_c[key], sql_c[key]
        for col in EXACT_CANDIDATE_COLUMNS:
            if int(r[col]) != int(s[col]):
                problems.append(f"InfCand {key}: {col} reference {r[col]} SQL {s[col]}")
        for col in FLOAT_CANDIDATE_COLUMNS:
            if not _close(float(r[col]), float(s[col]), rel_tol):
                problems.append(f"InfCand {key}: {col} reference {r[col]!r} SQL {s[col]!r}")
        tied = [
            rank
            for score, ranks in groups[key[3:6]].items()
            if _close(score, r["score"], rel_tol)
            for rank in ranks
        ]
        if not (min(tied) <= int(s["rank_for_hypothesis"]) <= max(tied)):
            problems.append(
                f"InfCand {key}: rank reference {r['rank_for_hypothesis']} (ties {min(tied)}..{max(tied)}) "
                f"SQL {s['rank_for_hypothesis']}"
            )
    return problems
