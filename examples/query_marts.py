"""The marts from Python with the project's API (warehouse/api.py): the best inference candidates, why
the best one holds (the entity pairs both relations share and the sentences behind them), and a plot of
every candidate's scores.

    make demo                                    # builds the demo warehouse
    .venv/bin/python examples/query_marts.py     # options: --database-url URL, --engine, --top N, --out DIR
    SHERLIIC_ENGINE=spark .venv/bin/python examples/query_marts.py    # the Spark warehouse

tests/test_api.py runs it on a small built warehouse.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pandas as pd

from warehouse import MartError, list_marts, open_warehouse
from warehouse.command_line import OUTPUT_FOLDER, run, target_options, version_option
from warehouse.errors import print_error
from warehouse.settings import out_folder
from warehouse.target import ENGINES, Target

CANDIDATE_COLUMNS = [
    "premise_typed_rel_id",
    "hypothesis_typed_rel_id",
    "premise_rel_id",
    "hypothesis_rel_id",
    "alignment",
    "premise_path",
    "premise_type_a",
    "premise_type_b",
    "hypothesis_path",
    "hypothesis_type_a",
    "hypothesis_type_b",
    "relv",
    "sigma",
    "esr",
    "score",
]
PAIR = ["arg1_entity_id", "arg2_entity_id"]


def top_candidates(warehouse, n: int) -> pd.DataFrame:
    """The n best-scoring InfCands (ties broken by the stable candidate key)."""
    return warehouse.read_mart(
        "inference_candidates", columns=CANDIDATE_COLUMNS, order_by="score desc, candidate_key", limit=n
    )


def typed(candidates: pd.DataFrame, side: str) -> pd.Series:
    """A side of each candidate as `path[type_a, type_b]`."""
    types = candidates[f"{side}_type_a"] + ", " + candidates[f"{side}_type_b"]
    return candidates[f"{side}_path"] + "[" + types + "]"


def supporting_sentences(warehouse, candidate: pd.Series) -> pd.DataFrame:
    """Why a candidate holds: each entity pair (x, y) of A∩B with a premise and a hypothesis sentence
    (the pandas version of sql/supporting_sentences.sql)."""

    def edges(typed_rel_id: int) -> pd.DataFrame:
        return warehouse.read_mart(
            "teg_edges", columns=PAIR, where="typed_rel_id = %s", params=[int(typed_rel_id)]
        )

    def sentences(rel_id: int) -> pd.DataFrame:
        return warehouse.read_mart(
            "relation_instances",
            columns=[*PAIR, "sentence_text"],
            where="rel_id = %s",
            params=[int(rel_id)],
            order_by="document_id, line_number",
        ).drop_duplicates(PAIR)

    premise, hypothesis = edges(candidate.premise_typed_rel_id), edges(candidate.hypothesis_typed_rel_id)
    hypothesis_sentences = sentences(candidate.hypothesis_rel_id)
    if candidate.alignment == "crossed":  # A(x,y) => B(y,x): read B's pairs the other way round
        swap = {"arg1_entity_id": "arg2_entity_id", "arg2_entity_id": "arg1_entity_id"}
        hypothesis, hypothesis_sentences = (
            hypothesis.rename(columns=swap),
            hypothesis_sentences.rename(columns=swap),
        )
    overlap = premise.merge(hypothesis, on=PAIR)
    why = overlap.merge(sentences(candidate.premise_rel_id), on=PAIR).merge(
        hypothesis_sentences, on=PAIR, suffixes=("_premise", "_hypothesis")
    )
    names = warehouse.read_mart("entities", columns=["entity_id", "entity_name"]).set_index("entity_id")
    why["x"] = why["arg1_entity_id"].map(names["entity_name"])
    why["y"] = why["arg2_entity_id"].map(names["entity_name"])
    why = why.rename(columns={"sentence_text_premise": "premise", "sentence_text_hypothesis": "hypothesis"})
    return why[["x", "y", "premise", "hypothesis"]].sort_values(["x", "y"], ignore_index=True)


def plot_scores(candidates: pd.DataFrame, path: Path) -> Path:
    """Relv against σ for every candidate, coloured by esr (log-log), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4.5))
    points = axes.scatter(candidates["relv"], candidates["sigma"], c=candidates["esr"], s=12, cmap="viridis")
    axes.set(xscale="log", yscale="log", xlabel="Relv", ylabel="σ", title=f"{len(candidates):,} InfCands")
    figure.colorbar(points, label="esr")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


@click.command()
@version_option
@target_options(engines=ENGINES)
@click.option("--top", default=10, show_default=True, help="How many of the best candidates to list.")
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    default=lambda: out_folder() / "examples",
    help="Folder of the plot.",
)
def cli(target: Target, top: int, out: Path) -> None:
    """Top InfCands, the sentences behind the best one, and a plot of all candidates' scores."""
    pd.set_option("display.width", 200)
    pd.set_option("display.max_colwidth", 60)
    print("marts:", ", ".join(list_marts()))
    with open_warehouse(target) as warehouse:
        best = top_candidates(warehouse, top)
        if best.empty:
            raise MartError("inference_candidates is empty: no rule passed the thresholds")
        print(f"\nTop {len(best)} inference candidates:")
        print(
            best.assign(premise=typed(best, "premise"), hypothesis=typed(best, "hypothesis"))[
                ["premise", "hypothesis", "alignment", "relv", "sigma", "esr", "score"]
            ].to_string()
        )
        first = best.iloc[0]
        why = supporting_sentences(warehouse, first)
        rule = f"{first.premise_path} ⇒ {first.hypothesis_path} ({first.alignment})"
        print(f"\nWhy {rule}: {len(why)} entity pairs")
        print(why.head(10).to_string())
        every = warehouse.read_mart("inference_candidates", columns=["relv", "sigma", "esr"])
    print(f"\nplot: {plot_scores(every, out / 'candidate_scores.png')}")


def main(argv: list[str] | None = None) -> int:
    try:
        return run(cli, argv, prog_name="query_marts.py")
    except MartError as exc:  # no such mart, not built yet, other corpora: one line
        print_error(exc)
        return 2


if __name__ == "__main__":
    sys.exit(main())
