"""Distributional baselines computed in SQL over the TEG marts (paper §4, Table 3; Hosseini et al. 2018).

Python only ships the item list to the warehouse (a session table of canonical paths, types and the
crossed flag); every set-based score is one SQL query over the build's `untyped_edges` / `teg_edges`
(schema `warehouse`, or `build_<name>`), the same on Postgres and on Spark (warehouse.target; the few
differences are spelled per engine).

Orientation. Benchmark paths are in SherLIiC orientation (argument A = left end), warehouse relations
are canonical (subject on the left). `deppath.paths.canonical_path` tells whether a path was reversed;
the entity pair (x, y) of the premise is compared with the hypothesis' pair in the same SherLIiC
orientation, so when exactly one side was reversed (crossed alignment) the hypothesis' canonical pair
(a1, a2) is read as (a2, a1).

Scores, x = premise, y = hypothesis vector over entity pairs f:
- counts c_x(f) = n_instances of the relation with entity pair f
- WeedsPrec(x,y) = Σ_f c_x(f)·[c_y(f)>0] / Σ_f c_x(f)
- CL(x,y) = Σ_f min(c_x(f), c_y(f)) / Σ_f c_x(f);  invCL(x,y) = sqrt(CL(x,y)·(1 − CL(y,x)))
- PMI weights (Hosseini et al. 2018, TACL, weight the entity-pair features of a relation by their
  pointwise mutual information; only the positive part counts, as in Lin 1998):
      w_r(f) = max(0, ln( c(r,f) · N / (c(r) · c(f)) ))
  with c(r,f) the relation's count for pair f, c(r) = Σ_f c(r,f), c(f) = Σ_r c(r,f) and
  N = Σ_{r,f} c(r,f), the last two over the whole untyped graph (`untyped_edges`). For a typed
  relation T, c(T,f) and c(T) come from its own edges (`teg_edges`); c(f) and N stay untyped, so an
  entity pair is not counted again for every overlapping type signature. F(x) = {f : w_x(f) > 0}.
- WeedsPMI(x,y) = Σ_{f∈F(x)∩F(y)} w_x(f) / Σ_{f∈F(x)} w_x(f)
- Lin(x,y) = Σ_{f∈F(x)∩F(y)} (w_x(f) + w_y(f)) / (Σ_{F(x)} w_x + Σ_{F(y)} w_y)   (Lin 1998)
- BInc(x,y) = sqrt(Lin(x,y) · WeedsPMI(x,y))   (Szpektor & Dagan 2008)
- Sherlock+ESR = Relv·σ·esr of the typed pair (docs/design.md §5, set semantics): the mart's score from
  the build's `inference_candidates` when the pair is an InfCand, else the same formulas
  (:mod:`teg.scores`) on the counts the SQL returns.

An item whose premise or hypothesis has no warehouse relation (or, typed, no typed relation with the
item's types) gets NaN = not covered. An empty PMI feature set gives 0 (covered, no evidence).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from deppath.paths import canonical_path
from evaluation.registry import Context, ResourceMissing, register
from teg.scores import esr, relv, sigma
from warehouse.target import Marts, Target, marts_of

SCORE_COLUMNS = ("weeds_prec", "cl_xy", "cl_yx", "inv_cl", "weeds_pmi", "lin", "binc", "sherlock_esr")


def canonical_item_table(items: pd.DataFrame) -> pd.DataFrame:
    """Items in warehouse orientation: canonical paths, canonical-slot types and the crossed flag."""
    rows = []
    for row_no, (_, item) in enumerate(items.iterrows()):
        prem, hypo = item.get("premise_path"), item.get("hypothesis_path")
        if not isinstance(prem, str) or not isinstance(hypo, str) or not prem or not hypo:
            continue
        prem_canon, prem_rev = canonical_path(prem)
        hypo_canon, hypo_rev = canonical_path(hypo)
        pa, pb = _type(item, "premise_type_a"), _type(item, "premise_type_b")
        ha, hb = _type(item, "hypothesis_type_a"), _type(item, "hypothesis_type_b")
        rows.append(
            {
                "row_no": row_no,
                "prem_path": prem_canon,
                "hypo_path": hypo_canon,
                # the canonical left slot holds SherLIiC's argument B when the path was reversed
                "prem_type_1": pb if prem_rev else pa,
                "prem_type_2": pa if prem_rev else pb,
                "hypo_type_1": hb if hypo_rev else ha,
                "hypo_type_2": ha if hypo_rev else hb,
                "crossed": bool(prem_rev) != bool(hypo_rev),
            }
        )
    columns = [
        "row_no",
        "prem_path",
        "hypo_path",
        "prem_type_1",
        "prem_type_2",
        "hypo_type_1",
        "hypo_type_2",
        "crossed",
    ]
    return pd.DataFrame(rows, columns=columns)


def _type(item: pd.Series, column: str) -> str | None:
    value = item.get(column)
    return value if isinstance(value, str) and value else None


ITEM_TYPES = {
    "row_no": "integer",
    "prem_path": "text",
    "hypo_path": "text",
    "prem_type_1": "text",
    "prem_type_2": "text",
    "hypo_type_1": "text",
    "hypo_type_2": "text",
    "crossed": "boolean",
}


def load_items(marts: Marts, items: pd.DataFrame) -> int:
    """The session table bl_items of the benchmark items (canonical_item_table); returns its row count."""
    table = canonical_item_table(items)
    marts.temp_table_of("bl_items", table, ITEM_TYPES)
    return len(table)


# Item -> relation keys. Untyped: the relation with the canonical path. Typed: among the typed
# relations of that path, in this order of preference, the one whose slot types (type_a, type_b)
# 1. equal the item's canonical-slot types, 2. equal them after normalisation (lower case, last `/`
# component: Freebase/FIGER `/location/city` and NER `CITY` both read `city`, as SherLIiC's type names
# do), 3. whose type signature (tsg_a, tsg_b) contains them (normalised); ties -> the larger typed
# relation, then the smaller id. (A comparison with an unknown type is null: it ranks first, as
# Postgres orders nulls in `desc`; spelled out so that Spark orders the same.)
RESOLVE_UNTYPED = """
select i.row_no, p.rel_id as prem_key, h.rel_id as hypo_key, i.crossed
from bl_items as i
inner join {schema}.relations as p on p.path = i.prem_path
inner join {schema}.relations as h on h.path = i.hypo_path
"""


def _norm_type(expression: str) -> str:
    return f"lower(regexp_replace({expression}, '^.*/', ''))"


def _has_normalised(array: str, value: str, engine: str) -> str:
    """SQL: some element of the type array `array` normalises to `value`."""
    if engine == "spark":
        return f"exists({array}, x -> {_norm_type('x')} = {value})"
    return f"exists (select 1 from unnest({array}) as u (x) where {_norm_type('u.x')} = {value})"


def _typed_side(side: str, engine: str, schema: str) -> str:
    t1, t2 = f"i.{side}_type_1", f"i.{side}_type_2"
    n1, n2 = _norm_type(t1), _norm_type(t2)
    exact = f"(t.type_a = {t1} and t.type_b = {t2})"
    normalised = f"({_norm_type('t.type_a')} = {n1} and {_norm_type('t.type_b')} = {n2})"
    in_tsg = f"({_has_normalised('t.tsg_a', n1, engine)} and {_has_normalised('t.tsg_b', n2, engine)})"
    return f"""{side} as (
    select row_no, typed_rel_id
    from (
        select
            i.row_no,
            t.typed_rel_id,
            row_number() over (
                partition by i.row_no
                order by {exact} desc nulls first, {normalised} desc nulls first, t.n_entity_pairs desc,
                    t.typed_rel_id
            ) as preference
        from bl_items as i
        inner join {schema}.typed_relations as t
            on t.path = i.{side}_path and ({exact} or {normalised} or {in_tsg})
    ) as ranked
    where preference = 1
)"""


def resolve_typed(engine: str, schema: str = "warehouse") -> str:
    return f"""
with

{_typed_side("prem", engine, schema)},

{_typed_side("hypo", engine, schema)}

select i.row_no, p.typed_rel_id as prem_key, h.typed_rel_id as hypo_key, i.crossed
from bl_items as i
inner join prem as p on p.row_no = i.row_no
inner join hypo as h on h.row_no = i.row_no
"""


# Edges of the needed relations with count c and PMI weight w (formula in the module docstring).
EDGES = """
with

needed as (
    select prem_key as key from bl_resolved
    union
    select hypo_key from bl_resolved
),

edges as (
    select
        e.{key_column} as key,
        e.arg1_entity_id as a1,
        e.arg2_entity_id as a2,
        cast(sum(e.n_instances) as {double}) as c
    from {edge_table} as e
    inner join needed as n on n.key = e.{key_column}
    group by 1, 2, 3
),

relation_totals as (
    select key, sum(c) as c_r
    from edges
    group by key
),

pair_totals as (
    select u.arg1_entity_id as a1, u.arg2_entity_id as a2, cast(sum(u.n_instances) as {double}) as c_f
    from {schema}.untyped_edges as u
    inner join (select distinct a1, a2 from edges) as p
        on p.a1 = u.arg1_entity_id and p.a2 = u.arg2_entity_id
    group by 1, 2
),

grand_total as (
    select cast(sum(n_instances) as {double}) as n
    from {schema}.untyped_edges
)

select
    e.key,
    e.a1,
    e.a2,
    e.c,
    greatest(ln(e.c * g.n / (r.c_r * p.c_f)), 0) as w
from edges as e
inner join relation_totals as r on r.key = e.key
inner join pair_totals as p on p.a1 = e.a1 and p.a2 = e.a2
cross join grand_total as g
"""

SCORES = """
with

prem as (
    select r.row_no, e.a1 as x, e.a2 as y, e.c, e.w
    from bl_resolved as r
    inner join bl_edges as e on e.key = r.prem_key
),

-- the hypothesis' pair read in the premise's orientation
hypo as (
    select
        r.row_no,
        case when r.crossed then e.a2 else e.a1 end as x,
        case when r.crossed then e.a1 else e.a2 end as y,
        e.c,
        e.w
    from bl_resolved as r
    inner join bl_edges as e on e.key = r.hypo_key
),

prem_totals as (
    select row_no, sum(c) as c_sum, sum(w) as w_sum, cast(count(*) as {double}) as size
    from prem
    group by row_no
),

hypo_totals as (
    select row_no, sum(c) as c_sum, sum(w) as w_sum, cast(count(*) as {double}) as size
    from hypo
    group by row_no
),

shared as (
    select
        p.row_no,
        sum(p.c) as c_prem,
        sum(least(p.c, h.c)) as c_min,
        sum(case when p.w > 0 and h.w > 0 then p.w else 0 end) as w_prem,
        sum(case when p.w > 0 and h.w > 0 then p.w + h.w else 0 end) as w_both,
        cast(count(*) as {double}) as overlap
    from prem as p
    inner join hypo as h on h.row_no = p.row_no and h.x = p.x and h.y = p.y
    group by p.row_no
),

shared_entities as (
    select row_no, cast(count(distinct entity) as {double}) as n_entities
    from (
        select p.row_no, p.x as entity
        from prem as p inner join hypo as h on h.row_no = p.row_no and h.x = p.x and h.y = p.y
        union all
        select p.row_no, p.y
        from prem as p inner join hypo as h on h.row_no = p.row_no and h.x = p.x and h.y = p.y
    ) as ends
    group by row_no
),

entity_space as (
    {entity_space}
),

base as (
    select
        r.row_no,
        r.prem_key,
        r.hypo_key,
        r.crossed,
        coalesce(s.c_prem, 0) / pt.c_sum as weeds_prec,
        coalesce(s.c_min, 0) / pt.c_sum as cl_xy,
        coalesce(s.c_min, 0) / ht.c_sum as cl_yx,
        coalesce(coalesce(s.w_prem, 0) / nullif(pt.w_sum, 0), 0) as weeds_pmi,
        coalesce(coalesce(s.w_both, 0) / nullif(pt.w_sum + ht.w_sum, 0), 0) as lin,
        -- the counts behind Relv, σ and esr (computed in Python by teg.scores)
        coalesce(s.overlap, 0) as overlap,
        pt.size as prem_size,
        ht.size as hypo_size,
        es.n_entities,
        coalesce(se.n_entities, 0) as overlap_entities
    from bl_resolved as r
    inner join prem_totals as pt on pt.row_no = r.row_no
    inner join hypo_totals as ht on ht.row_no = r.row_no
    left join shared as s on s.row_no = r.row_no
    left join shared_entities as se on se.row_no = r.row_no
    cross join entity_space as es
)

select
    s.row_no,
    s.weeds_prec,
    s.cl_xy,
    s.cl_yx,
    sqrt(greatest(s.cl_xy * (1 - s.cl_yx), 0)) as inv_cl,
    s.weeds_pmi,
    s.lin,
    sqrt(s.lin * s.weeds_pmi) as binc,
    s.overlap,
    s.prem_size,
    s.hypo_size,
    s.n_entities,
    s.overlap_entities,
    {infcand_score} as infcand_score
from base as s
{infcand_join}
"""

# |E|² for Relv (docs/design.md §5: the distinct entities of the whole untyped graph); only the typed
# pass needs it
ENTITY_SPACE = """select cast(count(*) as {double}) as n_entities
    from (
        select arg1_entity_id from {schema}.untyped_edges
        union
        select arg2_entity_id from {schema}.untyped_edges
    ) as entities"""

INFCAND_JOIN = """
left join {schema}.inference_candidates as ic
    on ic.premise_typed_rel_id = s.prem_key
    and ic.hypothesis_typed_rel_id = s.hypo_key
    and ic.alignment = case when s.crossed then 'crossed' else 'straight' end
"""


@dataclass(frozen=True)
class Variant:
    name: str  # typed | untyped
    edge_table: str  # in the marts schema of the build read
    key_column: str

    def resolve_sql(self, engine: str, schema: str = "warehouse") -> str:
        if self.name == "untyped":
            return RESOLVE_UNTYPED.format(schema=schema)
        return resolve_typed(engine, schema)


VARIANTS = {
    "untyped": Variant("untyped", "untyped_edges", "rel_id"),
    "typed": Variant("typed", "teg_edges", "typed_rel_id"),
}
SCORE_QUERY_COLUMNS = [
    "row_no",
    "weeds_prec",
    "cl_xy",
    "cl_yx",
    "inv_cl",
    "weeds_pmi",
    "lin",
    "binc",
    "overlap",
    "prem_size",
    "hypo_size",
    "n_entities",
    "overlap_entities",
    "infcand_score",
]


def compute_scores(
    items: pd.DataFrame, warehouse: Target | Marts, variant: str, *, use_infcands: bool = True
) -> pd.DataFrame:
    """All set-based scores of `variant` ('typed' | 'untyped') for `items` (NaN = no relation), read from
    `warehouse`: a Target's marts or open marts of either engine (warehouse.target).

    The result is indexed like `items` and has the columns SCORE_COLUMNS (sherlock_esr only typed).
    use_infcands=False computes Sherlock+ESR here even for pairs that are InfCands (tests compare both).
    """
    spec = VARIANTS[variant]
    result = pd.DataFrame(np.nan, index=items.index, columns=list(SCORE_COLUMNS))
    with marts_of(warehouse) as marts:
        typed_marts = ("typed_relations", "teg_edges") if variant == "typed" else ()
        needed = ("relations", "untyped_edges", *typed_marts)
        schema = marts.schema
        for table in needed:
            if not marts.has_table(schema, table):
                raise ResourceMissing(f"mart {schema}.{table} is missing: run `make dbt-run` first")
        if load_items(marts, items) == 0:
            return result
        double = marts.type("double")
        marts.temp_table_as("bl_resolved", spec.resolve_sql(marts.engine, schema))
        edges = EDGES.format(
            key_column=spec.key_column, edge_table=f"{schema}.{spec.edge_table}", double=double, schema=schema
        )
        marts.temp_table_as("bl_edges", edges, index=("key",))
        has_ic = variant == "typed" and use_infcands and marts.has_table(schema, "inference_candidates")
        null = f"cast(null as {double})"
        entity_space = f"select {null} as n_entities"  # Relv's |E| only for the typed pass
        if variant == "typed":
            entity_space = ENTITY_SPACE.format(double=double, schema=schema)
        sql = SCORES.format(
            infcand_score="ic.score" if has_ic else null,
            infcand_join=INFCAND_JOIN.format(schema=schema) if has_ic else "",
            entity_space=entity_space,
            double=double,
        )
        rows = marts.rows(sql)
        marts.drop_temp_tables("bl_items", "bl_resolved", "bl_edges")
    scored = pd.DataFrame(rows, columns=SCORE_QUERY_COLUMNS, dtype=float)
    scored["sherlock_esr"] = _sherlock_esr(scored) if variant == "typed" else np.nan
    positions = scored["row_no"].astype(int).to_numpy()
    for column in SCORE_COLUMNS:
        values = result[column].to_numpy(copy=True)
        values[positions] = [significant(v) for v in scored[column].to_numpy(dtype=float)]
        result[column] = values
    return result


def significant(value: float, digits: int = 12) -> float:
    """`value` to 12 significant digits. Sums in SQL depend on the order an engine adds them in (Spark's
    partitioning, Postgres' plan), which changes the last bits: two items that score alike could then
    differ, breaking their tie and moving a threshold. Far below any difference a baseline means."""
    return float(f"{value:.{digits}g}") if math.isfinite(value) else value


def _sherlock_esr(scored: pd.DataFrame) -> np.ndarray:
    """Relv·σ·esr per row: the InfCand mart's score where the pair is a candidate, else the same
    formulas (teg.scores) on the pair's counts; 0 without overlap (Relv = 0)."""
    out = np.zeros(len(scored))
    for i, row in enumerate(scored.itertuples(index=False)):
        if not math.isnan(row.infcand_score):
            out[i] = row.infcand_score
        elif row.overlap > 0:
            counts = (int(row.overlap), int(row.prem_size), int(row.hypo_size), int(row.n_entities))
            out[i] = relv(*counts) * sigma(*counts) * esr(int(row.overlap_entities), int(row.overlap))
    return out


def items_key(items: pd.DataFrame) -> str:
    columns = [
        c
        for c in (
            "premise_path",
            "hypothesis_path",
            "premise_type_a",
            "premise_type_b",
            "hypothesis_type_a",
            "hypothesis_type_b",
        )
        if c in items.columns
    ]
    digest = hashlib.sha1(pd.util.hash_pandas_object(items[columns], index=True).to_numpy().tobytes())
    return digest.hexdigest()


def cached_scores(items: pd.DataFrame, ctx: Context, variant: str) -> pd.DataFrame:
    """compute_scores, memoised in ctx.cache so the ten registered baselines share two queries."""
    key = ("distributional", variant, ctx.target, items_key(items))
    if key not in ctx.cache:
        ctx.cache[key] = compute_scores(items, ctx.warehouse, variant)
    return ctx.cache[key]


def _register(name: str, variant: str, column: str, description: str) -> None:
    def score(items: pd.DataFrame, ctx: Context) -> pd.Series:
        return cached_scores(items, ctx, variant)[column].rename(name)

    score.__name__ = f"score_{column}_{variant}"
    register(name, tunable=True, description=description)(score)


for _variant in ("untyped", "typed"):
    _edges = "untyped_edges" if _variant == "untyped" else "teg_edges"
    _register(
        f"WeedsPrec ({_variant})",
        _variant,
        "weeds_prec",
        f"Weeds precision of premise entity-pair counts covered by the hypothesis ({_edges}, SQL)",
    )
    _register(
        f"invCL ({_variant})",
        _variant,
        "inv_cl",
        f"sqrt(CL(x,y)·(1−CL(y,x))) over entity-pair counts ({_edges}, SQL)",
    )
    _register(
        f"WeedsPMI ({_variant})",
        _variant,
        "weeds_pmi",
        f"PMI-weighted Weeds precision, Hosseini et al. 2018 ({_edges}, SQL)",
    )
    _register(f"Lin ({_variant})", _variant, "lin", f"Lin 1998 similarity of PMI features ({_edges}, SQL)")
    _register(
        f"BInc ({_variant})", _variant, "binc", f"sqrt(Lin·WeedsPMI), Szpektor & Dagan 2008 ({_edges}, SQL)"
    )

_register(
    "Sherlock+ESR",
    "typed",
    "sherlock_esr",
    "Relv·σ·esr of the typed pair (InfCand score, else the same formulas on its counts)",
)


def resolve_keys(items: pd.DataFrame, warehouse: Target | Marts, variant: str) -> pd.DataFrame:
    """Warehouse keys of each item's premise/hypothesis (rel_id untyped, typed_rel_id typed), indexed like
    `items`; NaN where the item has no such relation. Shared with the relation-embedding baselines."""
    spec = VARIANTS[variant]
    result = pd.DataFrame({"prem_key": np.nan, "hypo_key": np.nan, "crossed": False}, index=items.index)
    with marts_of(warehouse) as marts:
        if load_items(marts, items) == 0:
            return result
        rows = marts.rows(spec.resolve_sql(marts.engine, marts.schema))
        marts.drop_temp_tables("bl_items")
    for row_no, prem_key, hypo_key, crossed in rows:
        label = items.index[row_no]
        result.loc[label, ["prem_key", "hypo_key", "crossed"]] = [prem_key, hypo_key, crossed]
    return result
