"""The distributional baselines on marts built by real dbt from a tiny raw graph.

The raw graph is the one of tests/test_distributional.py (same counts, so the same hand-computed numbers),
loaded as relation instances, with entity types a: person, b: company, c: city, d: company, e: person
(f, g untyped), and built with lowered thresholds (r_min 1, no Relv/σ/esr cut). Then:
R1 typed (person, company) = {(a,b)}: c is a city; R2 typed (person, company) = {(a,b), (e,d)}.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pandas as pd
import pytest
from test_distributional import EDGES, HEAD, LEAD, OBEY, item, rev

from baselines.distributional import compute_scores
from builds.runner import run_dbt
from warehouse.target import Target

TYPES = {"a": "person", "b": "company", "c": "city", "d": "company", "e": "person"}
DBT_VARS = {"r_min": 1, "min_relv": 0, "min_sigma": -1.0e12, "min_esr": 0, "top_n_premises": 1000}
MODELS = ["tag:teg"]


def load_raw(target: Target) -> None:
    with target.connect() as conn:
        corpus = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status, corpus_name) "
            "values ('g.jsonl', 'jsonl', 'corpus', 'g', 'loaded', 'g') returning batch_id"
        ).fetchone()[0]
        types = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status) "
            "values ('t.tsv', 'types_tsv', 'types', 't', 'loaded') returning batch_id"
        ).fetchone()[0]
        for entity in "abcdefg":
            conn.execute("insert into raw.entities values (%s, %s, %s)", (corpus, entity, entity.upper()))
        with conn.cursor().copy(
            "copy raw.relation_instances (batch_id, path, arg1_entity_id, arg2_entity_id, subject_side)"
            " from stdin"
        ) as copy:
            for path, edges in EDGES.values():
                for a1, a2, count in edges:
                    for _ in range(count):
                        copy.write_row((corpus, path, a1, a2, 1))
        for entity, type_name in TYPES.items():
            conn.execute(
                "insert into raw.entity_types values (%s, %s, %s, 'test')", (types, entity, type_name)
            )


@pytest.fixture(scope="module")
def dbt_target(make_target, tmp_path_factory) -> Iterator[Target]:
    target = make_target()
    load_raw(target)
    folder = tmp_path_factory.mktemp("dbt_distributional")
    run_dbt(
        target,
        ["run", "--select", *MODELS, "--target-path", str(folder / "target"), "--log-path", str(folder)],
        DBT_VARS,
    )
    yield target


def test_untyped_scores_on_dbt_marts(dbt_target: Target) -> None:
    items = pd.DataFrame([item(LEAD, HEAD), item(LEAD, rev(OBEY)), item(LEAD, "nsubj^-___no___dobj")])
    s = compute_scores(items, dbt_target, "untyped")
    ln = math.log
    w1_ab, w1_cd, w2 = ln(186 / 48), ln(62 / 4), ln(124 / 48)
    assert s.loc[0, "weeds_prec"] == pytest.approx(3 / 4)
    assert s.loc[0, "inv_cl"] == pytest.approx(0.5)
    assert s.loc[0, "weeds_pmi"] == pytest.approx(w1_ab / (w1_ab + w1_cd))
    assert s.loc[0, "lin"] == pytest.approx((w1_ab + w2) / (w1_ab + w1_cd + 2 * w2))
    assert s.loc[1, "weeds_prec"] == pytest.approx(1.0)  # crossed
    assert s.loc[1, "inv_cl"] == pytest.approx(math.sqrt(3 / 4 * (1 - 3 / 14)))
    assert s.loc[2].isna().all()


def test_typed_scores_and_sherlock_match_the_infcand_mart(dbt_target: Target) -> None:
    items = pd.DataFrame(
        [item(LEAD, HEAD, ("person", "company")), item(rev(LEAD), rev(HEAD), ("company", "person"))]
    )
    s = compute_scores(items, dbt_target, "typed")
    ln = math.log
    assert s.loc[0, "weeds_prec"] == pytest.approx(1.0)
    assert s.loc[0, "inv_cl"] == pytest.approx(math.sqrt(2 / 3 * (1 - 2 / 4)))
    wt1, wt2 = ln(3 * 62 / (3 * 12)), ln(2 * 62 / (4 * 12))
    assert s.loc[0, "lin"] == pytest.approx((wt1 + wt2) / (wt1 + 2 * wt2))
    assert s.loc[0, "sherlock_esr"] == pytest.approx(24.5 * 2 * ln(24.5))
    pd.testing.assert_series_equal(s.loc[1], s.loc[0], check_names=False)


def test_sql_sherlock_equals_the_mart_for_every_infcand(dbt_target: Target) -> None:
    """Our Relv·σ·esr for arbitrary pairs agrees with warehouse.inference_candidates on all InfCands."""
    with dbt_target.connect() as conn:
        rows = conn.execute(
            "select premise_path, hypothesis_path, premise_type_a, premise_type_b, hypothesis_type_a,"
            " hypothesis_type_b, alignment, score from warehouse.inference_candidates"
        ).fetchall()
    assert len(rows) >= 3
    records = []
    for prem, hypo, pa, pb, ha, hb, alignment, _ in rows:
        if alignment == "crossed":  # the hypothesis read object-first lines the arguments up
            hypo, ha, hb = rev(hypo), hb, ha
        records.append(
            {
                **item(prem, hypo),
                "premise_type_a": pa,
                "premise_type_b": pb,
                "hypothesis_type_a": ha,
                "hypothesis_type_b": hb,
            }
        )
    items = pd.DataFrame(records)
    ours = compute_scores(items, dbt_target, "typed", use_infcands=False)["sherlock_esr"]
    mart = compute_scores(items, dbt_target, "typed")["sherlock_esr"]
    expected = [r[-1] for r in rows]
    assert ours.notna().all()
    assert ours.tolist() == pytest.approx(expected, rel=1e-9)
    assert mart.tolist() == pytest.approx(expected, rel=1e-9)


def test_noisy_labels_for_every_infcand(dbt_target: Target) -> None:
    """Best computable baseline by dev F1 labels every InfCand; crossed InfCands line up (overlap > 0)."""
    from baselines import noisy_labels
    from evaluation.evaluate import RESULT_COLUMNS, store_results
    from evaluation.registry import Context

    def row(method: str, f1: float, threshold: float) -> dict:
        base = dict.fromkeys(RESULT_COLUMNS, 0.0)
        return {
            **base,
            "method": method,
            "dataset": "sherliic",
            "split": "dev",
            "f1": f1,
            "threshold": threshold,
            "n_items": 10,
            "n_covered": 10,
        }

    store_results(
        dbt_target,
        pd.DataFrame(
            [
                row("hypothesis-only probe", 0.9, 0.5),  # needs text: not computable for InfCands
                row("no such baseline", 0.8, 0.5),
                row("WeedsPrec (typed)", 0.7, 0.9),
                row("Lemma", 0.2, float("nan")),
            ]
        ),
    )
    method, n, n_yes = noisy_labels.build(Context(target=dbt_target))
    assert method == "WeedsPrec (typed)"
    with dbt_target.connect() as conn:
        n_infcands, n_crossed = conn.execute(
            "select count(*), count(*) filter (where alignment = 'crossed')"
            " from warehouse.inference_candidates"
        ).fetchone()
        labels = conn.execute(
            "select raw_score, score, noisy_label, threshold from results.infcand_noisy_labels"
        ).fetchall()
    assert n == n_infcands == len(labels) and n_crossed > 0
    assert all(raw > 0 for raw, *_ in labels)  # every InfCand shares a pair with its premise, crossed too
    assert all(label == (score >= 0.9) for _, score, label, _ in labels)
    assert n_yes == sum(label for _, _, label, _ in labels) and 0 < n_yes < n
