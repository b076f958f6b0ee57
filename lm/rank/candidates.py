"""A typed rule as the verifier reads it: premise and hypothesis sentences from the project's renderer.

deppath.render turns each side of an InfCand into SherLIiC's typed template ("company[A] is acquiring
company[B]"; a crossed hypothesis has its arguments swapped). The verifier was trained on sentences about
named entities, so each typed placeholder becomes a readable argument: the type's last segment and the
argument's letter ("company A"; FIGER's `/organization/company` is "company A"; the top type, no
restriction, is the bare letter). The letters keep the two arguments apart, so the sentences say which
argument of the premise fills which slot of the hypothesis:

    nsubj^-___acquire___dobj (company, company) => nsubj^-___buy___dobj, straight
    -> "company A is acquiring company B" / "company A is buying company B"
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from deppath.render import Rendering, render_candidate

# what the ranking reads of each candidate (warehouse.inference_candidates)
CANDIDATE_COLUMNS = (
    "candidate_key",
    "premise_path",
    "premise_type_a",
    "premise_type_b",
    "hypothesis_path",
    "hypothesis_type_a",
    "hypothesis_type_b",
    "alignment",
)
PLACEHOLDER = re.compile(r"^(?P<type>.*)\[(?P<letter>[AB])\]$")


def candidates_query(schema: str) -> str:
    """Every candidate of the build (in the order of its stable key: chunks are reproducible)."""
    return f"select {', '.join(CANDIDATE_COLUMNS)} from {schema}.inference_candidates order by candidate_key"


def readable_argument(placeholder: str) -> str:
    """`company[A]` -> "company A", `/organization/company[B]` -> "company B", `[A]` -> "A"."""
    match = PLACEHOLDER.match(placeholder)
    if match is None:
        raise ValueError(f"not a typed placeholder: {placeholder!r}")
    name = re.split(r"[/.]", match["type"].strip("/"))[-1].replace("_", " ").strip()
    return f"{name} {match['letter']}" if name else match["letter"]


def sentence(rendering: Rendering) -> str:
    """The rendering with readable arguments, as one sentence (no final period: patterns add it)."""
    parts = (
        readable_argument(rendering.argleft),
        rendering.middle,
        readable_argument(rendering.argright),
        rendering.end,
    )
    return " ".join(part for part in parts if part)


def rule_sentences(
    premise_path: str,
    premise_types: tuple[str | None, str | None],
    hypothesis_path: str,
    hypothesis_types: tuple[str | None, str | None],
    alignment: str,
) -> tuple[str, str]:
    """(premise sentence, hypothesis sentence) of one typed rule."""
    premise, hypothesis = render_candidate(
        premise_path, premise_types, hypothesis_path, hypothesis_types, alignment
    )
    return sentence(premise), sentence(hypothesis)


def sentences_of(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Premise and hypothesis sentences of candidate rows (CANDIDATE_COLUMNS), aligned with the rows."""
    premises, hypotheses = [], []
    for row in frame.itertuples(index=False):
        p, h = rule_sentences(
            row.premise_path,
            (row.premise_type_a, row.premise_type_b),
            row.hypothesis_path,
            (row.hypothesis_type_a, row.hypothesis_type_b),
            row.alignment,
        )
        premises.append(p)
        hypotheses.append(h)
    return premises, hypotheses


def candidate_frame(rows: Iterable[tuple]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=list(CANDIDATE_COLUMNS))
