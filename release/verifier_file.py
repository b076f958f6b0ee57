"""`rules_verifier.tsv` of the export (release/export.py): a verifier score for every rule of rules.tsv.

One line per rule of rules.tsv and verifier that ranked the build (`make rank`; the mart
candidate_verifier_scores, a view over the scores it writes), in the order of rules.tsv, with a header:
``candidate_key``, ``premise``, ``conclusion`` (as in rules.tsv), ``verifier_key``, ``verifier_name``,
``backend``, ``verifier_score`` (the entailment probability; empty where that ranking has not reached
the rule yet). Without any ranking of the build the file holds the header only.

Both engines run the same query on the build's marts (on Spark the mart reads the copy of the scores
`make rank` keeps in its catalog, warehouse/schema/spark/raw.sql).
"""

from __future__ import annotations

import math
from pathlib import Path

from warehouse.target import Marts

VERIFIER_FILE = "rules_verifier.tsv"
COLUMNS = (
    "candidate_key",
    "premise",
    "conclusion",
    "verifier_key",
    "verifier_name",
    "backend",
    "verifier_score",
)


def verifier_query(schema: str) -> str:
    """Every rule of rules.tsv (the candidates' order) with each ranking of the build: the scores of the
    mart candidate_verifier_scores, empty where that ranking has not reached the rule yet."""
    return f"""
    with rankings as (
        select distinct verifier_key, verifier_name, backend from {schema}.candidate_verifier_scores
    )
    select
        candidates.candidate_key,
        candidates.premise_tsg_index || '~' || candidates.premise_rel_id as premise,
        candidates.hypothesis_tsg_index || '~' || candidates.hypothesis_rel_id as conclusion,
        rankings.verifier_key,
        rankings.verifier_name,
        rankings.backend,
        scores.verifier_score
    from {schema}.inference_candidates as candidates
    cross join rankings
    left join {schema}.candidate_verifier_scores as scores
        on rankings.verifier_key = scores.verifier_key
        and rankings.backend = scores.backend
        and candidates.candidate_key = scores.candidate_key
    order by candidates.hypothesis_rel_id, candidates.hypothesis_tsg_index, candidates.rank_for_hypothesis,
        rankings.verifier_key, rankings.backend"""


def _field(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = repr(float(value)) if isinstance(value, float) else str(value)
    return text.replace("\t", " ").replace("\n", " ").replace("\r", " ")


def export_verifier_scores(marts: Marts, out_dir: Path) -> int:
    """Write rules_verifier.tsv into `out_dir`; returns its data rows."""
    ranked = marts.has_table(marts.schema, "candidate_verifier_scores")
    n_rows = 0
    with (out_dir / VERIFIER_FILE).open("w", encoding="utf-8", newline="") as handle:
        handle.write("\t".join(COLUMNS) + "\n")
        if ranked:
            for row in marts.stream(verifier_query(marts.schema)):
                handle.write("\t".join(_field(v) for v in row) + "\n")
                n_rows += 1
    return n_rows
