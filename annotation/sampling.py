"""Sample InfCands into annotation batches and export them as a crowdsourcing-ready CSV.

Sampling is reproducible (md5 of seed and candidate identity, no RNG state) and stratifiable:
premises are drawn round-robin over strata, so every stratum is represented equally.
A batch shows each sampled premise as a fact with up to k of its candidate hypotheses (Figure 1).
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from builds.records import build_ref
from deppath.render import render_candidate
from files.spreadsheet import spreadsheet_safe
from warehouse.target import Target

STRATA = {
    "none": "''",
    "alignment": "ic.alignment",
    # quartile of the ranking score Relv·σ·esr over all candidates
    "score_quartile": "'q' || cast(ntile(4) over (order by ic.score) as text)",
    "hypothesis_rank": "case when ic.rank_for_hypothesis <= 10 then 'top10' else 'rest' end",
}
N_EXAMPLES = 3
# a batch name names its CSV (out/annotation/<name>.csv) and its item ids: a plain file name, never a path
BATCH_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")

_CANDIDATES_SQL = """
with

candidates as (

    select
        ic.*,
        {stratum} as stratum,
        md5(%(seed)s || ':' || ic.premise_path || ':' || ic.premise_type_a || ':' || ic.premise_type_b
            || ':' || ic.hypothesis_path || ':' || ic.hypothesis_type_a || ':' || ic.hypothesis_type_b
            || ':' || ic.alignment) as draw
    from {schema}.inference_candidates as ic

),

fresh as (

    -- candidates never sampled before (identity by paths and types: typed_rel_ids change per build)
    select c.*
    from candidates as c
    where not exists (
        select 1 from raw.annotation_items as ai
        where ai.premise_path = c.premise_path and ai.hypothesis_path = c.hypothesis_path
          and ai.premise_type_a = c.premise_type_a and ai.premise_type_b = c.premise_type_b
          and ai.hypothesis_type_a = c.hypothesis_type_a and ai.hypothesis_type_b = c.hypothesis_type_b
          and ai.alignment = c.alignment
    )

),

ranked as (

    select
        fresh.*,
        row_number() over (partition by premise_typed_rel_id order by draw) as rank_in_premise
    from fresh

),

premises as (

    -- a premise's stratum is that of its first-drawn candidate
    select
        premise_typed_rel_id,
        stratum,
        draw,
        row_number() over (partition by stratum order by draw) as rank_in_stratum
    from ranked
    where rank_in_premise = 1

),

chosen as (

    select premise_typed_rel_id, stratum, rank_in_stratum, draw
    from premises
    order by rank_in_stratum, stratum
    limit %(n_premises)s

)

select ranked.*, chosen.stratum as premise_stratum
from ranked
inner join chosen using (premise_typed_rel_id)
where ranked.rank_in_premise <= %(k)s
order by chosen.rank_in_stratum, chosen.stratum, ranked.rank_in_premise
"""

_EXAMPLES_SQL = """
select e1.entity_name as a, e2.entity_name as b, t.n_instances
from {schema}.teg_edges as t
inner join {schema}.entities as e1 on e1.entity_id = t.arg1_entity_id
inner join {schema}.entities as e2 on e2.entity_id = t.arg2_entity_id
where t.typed_rel_id = %(typed_rel_id)s
order by t.n_instances desc, e1.entity_name, e2.entity_name
limit 200
"""


def check_batch_name(name: str) -> str:
    """`name` when it is a plain batch name (letters, digits, '-', '_' and '.', starting with a letter or
    digit, at most 100 characters), else one-line ValueError: no name can point outside out/annotation,
    create folders or hide its CSV."""
    if not isinstance(name, str) or not BATCH_NAME.fullmatch(name):
        raise ValueError(
            f"batch name {name!r}: use letters, digits, '-', '_' and '.', starting with a letter or digit "
            "(at most 100 characters)"
        )
    return name


@dataclass(frozen=True)
class SampleSummary:
    batch_name: str
    n_premises: int
    n_items: int
    build: str = "default"  # the build the candidates came from (name #record)


def _top_distinct(values: list[str], n: int) -> list[str]:
    out: list[str] = []
    for value in values:
        if value not in out:
            out.append(value)
        if len(out) == n:
            break
    return out


def sample_batch(
    target: Target,
    batch_name: str,
    n_premises: int,
    *,
    hypotheses_per_premise: int = 3,
    seed: int = 0,
    stratify_by: str = "none",
    task: str = "sherliic",
) -> SampleSummary:
    """Draw `n_premises` premises (round-robin over strata) with up to k hypotheses each into raw tables
    (the candidates of the marts of the Target's build, which the batch records; the batch is stored in
    its Postgres database)."""
    check_batch_name(batch_name)
    if stratify_by not in STRATA:
        raise ValueError(f"stratify_by must be one of {sorted(STRATA)}, not {stratify_by!r}")
    if n_premises < 1 or hypotheses_per_premise < 1:
        raise ValueError("n_premises and hypotheses_per_premise must be positive")
    schema = target.marts_schema
    target.ensure_schema()
    build = build_ref(target)
    with target.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
        if cur.execute(
            "select 1 from raw.annotation_batches where batch_name = %s", (batch_name,)
        ).fetchone():
            raise ValueError(f"annotation batch {batch_name!r} exists already; choose another name")
        sql = _CANDIDATES_SQL.format(stratum=STRATA[stratify_by], schema=schema)
        rows = cur.execute(
            sql, {"seed": str(seed), "n_premises": n_premises, "k": hypotheses_per_premise}
        ).fetchall()
        if not rows:
            raise ValueError(
                f"no inference candidates left to sample in {schema}.inference_candidates "
                "(build the marts first; candidates already in a batch are not sampled again)"
            )
        cur.execute(
            "insert into raw.annotation_batches (batch_name, task, seed, stratify_by, n_items, options, "
            "build, build_id) values (%s, %s, %s, %s, %s, %s, %s, %s)",
            (
                batch_name,
                task,
                seed,
                stratify_by,
                len(rows),
                Jsonb({"n_premises": n_premises, "hypotheses_per_premise": hypotheses_per_premise}),
                build.name,
                build.build_id,
            ),
        )
        examples: dict[int, tuple[list[str], list[str]]] = {}
        group_numbers: dict[int, int] = {}
        group_sizes: dict[int, int] = {}
        for row in rows:
            premise_id = row["premise_typed_rel_id"]
            if premise_id not in examples:
                pairs = cur.execute(
                    _EXAMPLES_SQL.format(schema=schema), {"typed_rel_id": premise_id}
                ).fetchall()
                examples[premise_id] = (
                    _top_distinct([p["a"] for p in pairs], N_EXAMPLES),
                    _top_distinct([p["b"] for p in pairs], N_EXAMPLES),
                )
                group_numbers[premise_id] = len(group_numbers) + 1
            group = group_numbers[premise_id]
            group_sizes[premise_id] = item_number = group_sizes.get(premise_id, 0) + 1
            premise, hypothesis = render_candidate(
                row["premise_path"],
                (row["premise_type_a"], row["premise_type_b"]),
                row["hypothesis_path"],
                (row["hypothesis_type_a"], row["hypothesis_type_b"]),
                row["alignment"],
            )
            ex_a, ex_b = examples[premise_id]
            cur.execute(
                """
                insert into raw.annotation_items (
                    item_id, batch_name, premise_group_id, stratum,
                    premise_typed_rel_id, hypothesis_typed_rel_id, premise_rel_id, hypothesis_rel_id,
                    premise_tsg_index, hypothesis_tsg_index, alignment, premise_path, hypothesis_path,
                    premise_type_a, premise_type_b, hypothesis_type_a, hypothesis_type_b,
                    prem_argleft, prem_middle, prem_argright, prem_end,
                    hypo_argleft, hypo_middle, hypo_argright, hypo_end,
                    premise_text, hypothesis_text, examples_a, examples_b, relv, sigma, esr, score
                ) values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
                          %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                """,
                (
                    f"{batch_name}-{group:04d}-{item_number}",
                    batch_name,
                    f"{batch_name}-{group:04d}",
                    row["premise_stratum"],
                    premise_id,
                    row["hypothesis_typed_rel_id"],
                    row.get("premise_rel_id"),
                    row.get("hypothesis_rel_id"),
                    row.get("premise_tsg_index"),
                    row.get("hypothesis_tsg_index"),
                    row["alignment"],
                    row["premise_path"],
                    row["hypothesis_path"],
                    row["premise_type_a"],
                    row["premise_type_b"],
                    row["hypothesis_type_a"],
                    row["hypothesis_type_b"],
                    premise.argleft,
                    premise.middle,
                    premise.argright,
                    premise.end,
                    hypothesis.argleft,
                    hypothesis.middle,
                    hypothesis.argright,
                    hypothesis.end,
                    premise.text,
                    hypothesis.text,
                    ex_a,
                    ex_b,
                    row["relv"],
                    row["sigma"],
                    row["esr"],
                    row["score"],
                ),
            )
        conn.commit()
    return SampleSummary(batch_name, len(group_numbers), len(rows), build.label)


def batch_groups(target: Target, batch_name: str) -> list[dict]:
    """The batch's premise groups in order: premise fields plus a list of hypothesis items."""
    with target.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
        items = cur.execute(
            "select * from raw.annotation_items where batch_name = %s order by item_id", (batch_name,)
        ).fetchall()
    if not items:
        raise ValueError(f"annotation batch {batch_name!r} has no items (sample it first)")
    return group_items(items)


def group_items(items: list[dict]) -> list[dict]:
    groups: dict[str, dict] = {}
    for item in items:
        group = groups.setdefault(
            item["premise_group_id"],
            {
                "premise_group_id": item["premise_group_id"],
                "premise_text": item["premise_text"],
                "examples_a": list(item["examples_a"]),
                "examples_b": list(item["examples_b"]),
                "hypotheses": [],
            },
        )
        group["hypotheses"].append(item)
    return list(groups.values())


def examples_line(examples_a: list[str], examples_b: list[str]) -> str:
    """`A: Google, Microsoft; B: Larry Page` — the example entities per slot (Figure 1)."""
    parts = []
    if examples_a:
        parts.append("A: " + ", ".join(examples_a))
    if examples_b:
        parts.append("B: " + ", ".join(examples_b))
    return "; ".join(parts)


def export_batch_csv(target: Target, batch_name: str, path: Path) -> int:
    """Crowdsourcing CSV: one row per premise fact, hypothesis_i_id/hypothesis_i columns (i = 1..k).

    Text cells are spreadsheet-safe (files.spreadsheet.spreadsheet_safe). Workers answer each
    hypothesis with yes / no / incomprehensible; the platform's results go back
    in through `annotation.results.import_results` (long format: item_id, worker_id, answer).
    """
    check_batch_name(batch_name)
    groups = batch_groups(target, batch_name)
    k = max(len(g["hypotheses"]) for g in groups)
    header = ["premise_group_id", "premise", "examples", "examples_a", "examples_b"]
    for i in range(1, k + 1):
        header += [f"hypothesis_{i}_id", f"hypothesis_{i}"]
    header.append("answer_options")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for group in groups:
            row = [
                group["premise_group_id"],
                spreadsheet_safe(group["premise_text"]),
                spreadsheet_safe(examples_line(group["examples_a"], group["examples_b"])),
                json.dumps(group["examples_a"], ensure_ascii=False),
                json.dumps(group["examples_b"], ensure_ascii=False),
            ]
            for i in range(k):
                if i < len(group["hypotheses"]):
                    item = group["hypotheses"][i]
                    row += [item["item_id"], spreadsheet_safe(item["hypothesis_text"])]
                else:
                    row += ["", ""]
            row.append("yes|no|incomprehensible")
            writer.writerow(row)
    return len(groups)
