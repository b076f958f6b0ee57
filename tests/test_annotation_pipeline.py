"""Integration with the real TEG build: a tiny raw graph -> dbt marts (inference_candidates, teg_edges,
entities) -> meta rules and an annotation batch sampled from the real marts."""

from __future__ import annotations

from pathlib import Path

from annotation.sampling import sample_batch
from builds.runner import run_dbt
from warehouse.target import Target

PAIRS = [(f"e{i}", f"f{i}") for i in range(1, 7)]
RELATIONS = {
    "nsubj^-___agree___xcomp___buy___dobj": PAIRS[:5],
    "nsubj^-___buy___dobj": PAIRS,
    # the passive, canonical (subject left): its subject is the bought entity
    "nsubjpass^-___buy___prep___by___pobj": [(b, a) for a, b in PAIRS[:5]],
}
# thresholds relaxed for a six-pair graph (the paper's are for ClueWeb scale)
VARS = {"top_k_types": 2, "r_min": 1, "min_relv": 0, "min_sigma": -1000000, "min_esr": 0}


def _load_raw_graph(target: Target) -> None:
    with target.connect() as conn:
        batch = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status, corpus_name) "
            "values ('fixture', 'jsonl', 'corpus', 'c', 'loaded', 'fixture') returning batch_id"
        ).fetchone()[0]
        types = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status) "
            "values ('fixture-types', 'tsv', 'types', 't', 'loaded') returning batch_id"
        ).fetchone()[0]
        for a, b in PAIRS:
            conn.execute(
                "insert into raw.entities values (%s, %s, %s), (%s, %s, %s)",
                (batch, a, f"Buyer {a}", batch, b, f"Company {b}"),
            )
            conn.execute(
                "insert into raw.entity_types values (%s, %s, 'organization', 'fixture'), "
                "(%s, %s, 'company', 'fixture')",
                (types, a, types, b),
            )
        for path, pairs in RELATIONS.items():
            for a, b in pairs:
                conn.execute(
                    "insert into raw.relation_instances (batch_id, path, arg1_entity_id, arg2_entity_id, "
                    "subject_side) values (%s, %s, %s, %s, 1)",
                    (batch, path, a, b),
                )
        conn.commit()


def test_meta_rules_and_sampling_on_the_real_marts(fresh_target: Target, tmp_path: Path) -> None:
    _load_raw_graph(fresh_target)
    private = ["--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")]
    run_dbt(
        fresh_target,
        ["run", "--select", "+inference_candidates", "+teg_edges", "+entities", "tag:meta_rules", *private],
        VARS,
    )
    with fresh_target.connect() as conn:
        implicative = conn.execute("select verb, n_rules from warehouse.meta_rules_implicative").fetchall()
        crossed = conn.execute(
            "select n_rules from warehouse.meta_rules_word where premise_pattern = 'nsubj^-___X___dobj' "
            "and hypothesis_pattern = 'nsubjpass^-___X___prep___by___pobj' and alignment = 'crossed'"
        ).fetchall()
    assert implicative == [("agree", 1)]
    assert crossed == [(1,)]

    summary = sample_batch(fresh_target, "real", 2, hypotheses_per_premise=2, seed=1)
    assert summary.n_items >= 2
    with fresh_target.connect() as conn:
        items = conn.execute(
            "select premise_path, hypothesis_path, alignment, premise_text, hypothesis_text, examples_a, "
            "examples_b from raw.annotation_items"
        ).fetchall()
    for *_paths, premise_text, hypothesis_text, ex_a, ex_b in items:
        assert "[A]" in premise_text and "[B]" in hypothesis_text
        assert ex_a and all(name.startswith("Buyer ") for name in ex_a)  # subject slot: the buyers
        assert ex_b and all(name.startswith("Company ") for name in ex_b)
    # crossed InfCand: the passive hypothesis is rendered with A and B swapped
    crossed_texts = [
        (item[3], item[4]) for item in items if item[2] == "crossed" and item[0] == "nsubj^-___buy___dobj"
    ]
    assert crossed_texts, items
    for premise_text, hypothesis_text in crossed_texts:
        assert premise_text.split("[A]")[1].startswith(" is buying ") and premise_text.endswith("[B]")
        assert hypothesis_text.split("[B]")[1].startswith(
            " is being bought by "
        ) and hypothesis_text.endswith("[A]")
