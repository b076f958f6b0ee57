"""Noisy labels for every InfCand from the best baseline (paper §5: label the whole InfCand set
automatically, beyond the annotated benchmark).

Best baseline: the highest F1 on SherLIiC dev (results.baseline_scores, dataset 'sherliic', split 'dev',
written by `make baselines`) among the baselines that can score an InfCand, i.e. that need only the two
typed paths (not the benchmark's text, labels or lm_split); Always yes is left out too. Each InfCand
becomes an item in SherLIiC orientation: the premise's canonical path with its slot types; the
hypothesis' canonical path, read reversed (and its types swapped) when the alignment is crossed, so the
arguments line up as A(x,y) ⇒ B(x,y). The item is scored exactly as on dev: on top of Lemma when the
baseline runs so (evaluation.evaluate.run_on_top_of_lemma over the InfCand set), labelled yes iff the
combined score reaches the dev-tuned threshold (0.5 for non-tunable 0/1 baselines).

Result: results.infcand_noisy_labels (the build's rows replaced as a whole in one transaction). The InfCands
come from the marts of the command's build (either engine); the dev ranking (the same build's rows) and the
result live on its Postgres side.
"""

from __future__ import annotations

import math

import click
import numpy as np
import pandas as pd

from builds.records import BuildRef
from deppath.paths import is_reversed, reverse_path
from evaluation.catalog import load_all
from evaluation.context import command_context
from evaluation.evaluate import fill_uncovered, run_on_top_of_lemma
from evaluation.registry import REGISTRY, Context, ResourceMissing
from lm.plan import LmSettings
from warehouse.command_line import CONTEXT, run, target_options, version_option
from warehouse.settings import shared_data_dir
from warehouse.target import ENGINES, Marts, Target, marts_of

# The probe and the combination need benchmark text, labels or lm_split (not computable for an InfCand);
# Always yes would label every InfCand yes, which says nothing.
NOT_FOR_INFCANDS = frozenset({"hypothesis-only probe", "learned combination", "Always yes"})

INFCAND_QUERY = """
select
    premise_typed_rel_id, hypothesis_typed_rel_id, alignment,
    premise_path, hypothesis_path, premise_type_a, premise_type_b, hypothesis_type_a, hypothesis_type_b
from {schema}.inference_candidates
order by hypothesis_typed_rel_id, rank_for_hypothesis, premise_typed_rel_id
"""


def infcand_items(warehouse: Target | Marts) -> pd.DataFrame:
    """InfCands as benchmark items (registry columns) in SherLIiC orientation, from the marts of
    `warehouse` (a Target's, or open marts of either engine)."""
    with marts_of(warehouse) as marts:
        if not marts.has_table(marts.schema, "inference_candidates"):
            raise RuntimeError(f"{marts.schema}.inference_candidates is missing: run `make dbt-run` first")
        rows = marts.rows(INFCAND_QUERY.format(schema=marts.schema))
    records = []
    for prem_id, hypo_id, alignment, prem, hypo, pa, pb, ha, hb in rows:
        if alignment == "crossed":
            hypo, ha, hb = reverse_path(hypo), hb, ha
        records.append(
            {
                "item_id": f"{prem_id}=>{hypo_id}:{alignment}",
                "dataset": "infcands",
                "split": "all",
                "premise_typed_rel_id": prem_id,
                "hypothesis_typed_rel_id": hypo_id,
                "alignment": alignment,
                "premise_path": prem,
                "hypothesis_path": hypo,
                "premise_type_a": pa,
                "premise_type_b": pb,
                "hypothesis_type_a": ha,
                "hypothesis_type_b": hb,
                "is_premise_reversed": is_reversed(prem),
                "is_hypothesis_reversed": is_reversed(hypo),
                "premise_text": None,
                "hypothesis_text": None,
                "premise_middle": None,
                "hypothesis_middle": None,
                "label": False,
                "extra": {},
            }
        )
    return pd.DataFrame(records)


def dev_ranking(target: Target, build: BuildRef | None = None) -> pd.DataFrame:
    """SherLIiC dev rows of results.baseline_scores of `build` (default: the Target's; on the Target's
    Postgres side), best F1 first."""
    name = build.name if build is not None else target.build_name
    with target.on_postgres().connect() as conn:
        exists = conn.execute("select to_regclass('results.baseline_scores')").fetchone()[0]
        if exists is None:
            raise RuntimeError("results.baseline_scores is missing: run `make baselines` first")
        rows = conn.execute(
            "select method, threshold, f1 from results.baseline_scores"
            " where build = %s and dataset = 'sherliic' and split = 'dev' order by f1 desc, method",
            (name,),
        ).fetchall()
    return pd.DataFrame(rows, columns=["method", "threshold", "f1"])


def label_items(items: pd.DataFrame, ctx: Context, method: str, threshold: float | None) -> pd.DataFrame:
    """Score `items` with `method` as on dev and apply the dev threshold: columns raw_score, score, label."""
    baseline = REGISTRY[method]
    raw = baseline.score(items, ctx).reindex(items.index).astype(float)
    if baseline.on_top_of_lemma:
        lemma_yes = REGISTRY["Lemma"].score(items, ctx).reindex(items.index) == 1.0
        combined = run_on_top_of_lemma(raw, lemma_yes, baseline.tunable)
    else:
        combined = fill_uncovered(raw, baseline.tunable)
    cut = 0.5 if threshold is None or (isinstance(threshold, float) and math.isnan(threshold)) else threshold
    return pd.DataFrame({"raw_score": raw, "score": combined, "label": combined >= cut}, index=items.index)


def choose_best(
    ranking: pd.DataFrame, items: pd.DataFrame, ctx: Context
) -> tuple[str, float | None, pd.DataFrame]:
    """The best-by-dev-F1 baseline that can score the InfCands, with its labels."""
    load_all()
    reasons = []
    for method, threshold, _f1 in ranking.itertuples(index=False):
        if method in NOT_FOR_INFCANDS or method not in REGISTRY:
            reasons.append(f"{method}: not computable for InfCands")
            continue
        try:
            labelled = label_items(items, ctx, method, threshold)
        except ResourceMissing as exc:
            reasons.append(f"{method}: {exc}")
            continue
        return method, threshold, labelled
    raise RuntimeError("no baseline of results.baseline_scores can score the InfCands: " + "; ".join(reasons))


def write_table(
    target: Target,
    items: pd.DataFrame,
    labelled: pd.DataFrame,
    method: str,
    threshold: float | None,
    dev_f1: float,
    build: BuildRef | None = None,
) -> int:
    """Replace the rows of `build` (default: the Target's) in results.infcand_noisy_labels (the Target's
    Postgres side) with these labels (one transaction)."""
    build = build if build is not None else BuildRef(target.build_name)
    target = target.on_postgres()
    target.ensure_schema()
    with target.connect() as conn:
        conn.execute("delete from results.infcand_noisy_labels where build = %s", (build.name,))
        with conn.cursor().copy(
            "copy results.infcand_noisy_labels (build, build_id, premise_typed_rel_id,"
            " hypothesis_typed_rel_id, alignment, method, dev_f1, threshold, raw_score, score, noisy_label)"
            " from stdin"
        ) as copy:
            thr = None if threshold is None or math.isnan(float(threshold)) else float(threshold)
            for (_, item), (_, lab) in zip(items.iterrows(), labelled.iterrows(), strict=True):
                raw = None if np.isnan(lab["raw_score"]) else float(lab["raw_score"])
                copy.write_row(
                    (
                        build.name,
                        build.build_id,
                        int(item["premise_typed_rel_id"]),
                        int(item["hypothesis_typed_rel_id"]),
                        item["alignment"],
                        method,
                        dev_f1,
                        thr,
                        raw,
                        float(lab["score"]),
                        bool(lab["label"]),
                    )
                )
    return len(items)


def build(ctx: Context, method: str | None = None) -> tuple[str, int, int]:
    """Label every InfCand of the Context's warehouse; returns (method, n_infcands, n_positive)."""
    items = infcand_items(ctx.warehouse)
    ranking = dev_ranking(ctx.target, ctx.build_ref)
    if method is not None:
        ranking = ranking[ranking["method"] == method]
        if ranking.empty:
            raise RuntimeError(f"{method!r} has no SherLIiC dev row in results.baseline_scores")
    if items.empty:  # nothing to label: keep an empty table, named after the best candidate
        usable = ranking[~ranking["method"].isin(NOT_FOR_INFCANDS)]
        if usable.empty:
            raise RuntimeError("no baseline of results.baseline_scores can score InfCands")
        chosen, threshold = usable.iloc[0]["method"], usable.iloc[0]["threshold"]
        labelled = pd.DataFrame({"raw_score": [], "score": [], "label": []})
    else:
        chosen, threshold, labelled = choose_best(ranking, items, ctx)
    dev_f1 = float(ranking.set_index("method").loc[chosen, "f1"])
    n = write_table(ctx.target, items, labelled, chosen, threshold, dev_f1, ctx.build_ref)
    return chosen, n, int(labelled["label"].sum()) if n else 0


@click.command(context_settings=CONTEXT)
@version_option
@click.option("--method", help="Use this baseline instead of the best by SherLIiC dev F1.")
@target_options(engines=ENGINES, build=True)
def cli(target: Target, method: str | None) -> None:
    """Noisy labels for every InfCand from the best dev baseline (`make noisy-labels`).

    Writes results.infcand_noisy_labels; needs `make baselines` first (results.baseline_scores)."""
    with command_context(target, shared_data=shared_data_dir(), lm=LmSettings.as_recorded()) as ctx:
        method, n, n_pos = build(ctx, method)
        label = ctx.build_ref.label
    print(f"results.infcand_noisy_labels: {n} InfCands of build {label} labelled by {method!r}, {n_pos} yes")


def main(argv: list[str] | None = None) -> int:
    # the library names a missing prerequisite (`make dbt-run`, `make baselines` first) as RuntimeError
    return run(cli, argv, prog_name="python -m baselines.noisy_labels", user_errors=(RuntimeError,))


if __name__ == "__main__":
    raise SystemExit(main())
