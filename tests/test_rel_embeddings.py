"""Relation embeddings on the TEG: corpus format, deterministic training, cosine scores, tsg preference."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from test_distributional import LEAD, OBEY, OWN, build_marts, item, rev

from baselines import rel_embeddings as re_
from evaluation.registry import Context
from warehouse.errors import InputError
from warehouse.target import Target

PARAMS = re_.TrainParams(vector_size=16, workers=1, seed=7, min_count=5)


@pytest.fixture()
def marts_target(fresh_target: Target) -> Target:
    build_marts(fresh_target)
    return fresh_target


def test_corpus_lines_repeat_each_edge_count_times() -> None:
    lines = list(re_.corpus_lines([("rel:1", "a", "b c", 2), ("rel:2", "7", "8", 1)]))
    assert lines == [["arg0:a", "rel:1", "arg1:b_c"]] * 2 + [["arg0:7", "rel:2", "arg1:8"]]


def test_training_is_deterministic_and_cached(marts_target: Target, tmp_path) -> None:
    wv1 = re_.train_embeddings(marts_target, "untyped", PARAMS, tmp_path / "a")
    wv2 = re_.train_embeddings(marts_target, "untyped", PARAMS, tmp_path / "b")
    # R1 (lead) and R2 (head) occur 4 times each: below gensim's default min_count of 5
    assert set(wv1.key_to_index) >= {"rel:3", "rel:4"} and "rel:1" not in wv1.key_to_index
    np.testing.assert_array_equal(wv1["rel:3"], wv2["rel:3"])
    assert len(list((tmp_path / "a").glob("*.kv"))) == 1
    again = re_.train_embeddings(marts_target, "untyped", PARAMS, tmp_path / "a")  # loaded from the cache
    np.testing.assert_array_equal(again["rel:4"], wv1["rel:4"])


def test_cosine_scores(marts_target: Target, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SHERLIIC_OUT", str(tmp_path))
    items = pd.DataFrame(
        [item(OBEY, OWN), item(rev(OWN), OBEY), item(LEAD, OBEY), item("x___y___nsubj", OWN)]
    )
    ctx = Context(target=marts_target)
    scores = re_.relation_cosines(items, ctx, "untyped", PARAMS)
    wv = re_.train_embeddings(marts_target, "untyped", PARAMS, tmp_path / "rel_emb")
    a, b = wv["rel:3"], wv["rel:4"]
    expected = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
    assert scores[0] == pytest.approx(expected, abs=1e-6)
    assert scores[1] == pytest.approx(expected, abs=1e-6)  # orientation-free
    assert math.isnan(scores[2]) and math.isnan(scores[3])  # R1 has no vector; unknown path


def test_combine_adds_cosines_and_keeps_nan_only_when_both_missing() -> None:
    w2v = pd.Series([0.5, np.nan, 0.25, np.nan])
    rel = pd.Series([0.25, 0.5, np.nan, np.nan])
    out = re_.combine(w2v, rel)
    assert out.iloc[:3].tolist() == [0.75, 0.5, 0.25] and math.isnan(out.iloc[3])


def test_preference_file_and_vote(tmp_path) -> None:
    path = tmp_path / "tsg.txt"
    path.write_text("person/company\t1\nperson/city\t1\nregion/city\t0\n")
    pref = re_.read_preference_file(path)
    assert pref == {"person/company": True, "person/city": True, "region/city": False}
    assert re_.choose_typed("person/company", pref)
    assert re_.choose_typed("person/region", pref)  # person: 2 typed votes, region: 1 untyped vote
    assert re_.choose_typed("company/city", pref)  # company: 1 typed; city: 1 typed, 1 untyped -> 2:1
    assert not re_.choose_typed("region/company", pref)  # 1:1 tie -> untyped
    assert not re_.choose_typed("film/book", pref)  # nothing known -> untyped
    assert not re_.choose_typed(None, pref)
    path.write_text("person/company\tyes\n")
    with pytest.raises(InputError, match="tsg.txt:1"):
        re_.read_preference_file(path)


def test_learn_preference_picks_the_better_score_per_signature() -> None:
    items = pd.DataFrame(
        {
            "premise_type_a": ["p", "p", "p", "r", "r", "r"],
            "premise_type_b": ["c"] * 3 + ["x"] * 3,
            "label": [True, False, True, True, False, False],
        }
    )
    typed = pd.Series([0.9, 0.1, 0.8, 0.1, 0.9, 0.8])  # perfect on p/c, inverted on r/x
    untyped = pd.Series([0.2, 0.9, 0.1, 0.9, 0.1, 0.2])  # inverted on p/c, perfect on r/x
    assert re_.learn_preference(items, typed, untyped) == {"p/c": True, "r/x": False}


def test_w2v_tsg_rel_emb_follows_the_preference_file(
    marts_target: Target, shared_data, tmp_path, monkeypatch
) -> None:
    """military_combatant/region is 1 (typed) in the original file, location/region 0 (untyped)."""
    monkeypatch.setenv("SHERLIIC_OUT", str(tmp_path))
    items = pd.DataFrame(
        [item(OBEY, OWN, ("military_combatant", "region")), item(OBEY, OWN, ("location", "region"))]
    )
    ctx = Context(target=marts_target, shared_data=str(shared_data))
    tsg = re_.w2v_tsg_rel_emb(items, ctx)
    typed, untyped = re_.w2v_typed_rel(items, ctx), re_.w2v_untyped_rel(items, ctx)
    assert tsg[0] == typed[0] and tsg[1] == untyped[1]
    w2v = re_.word_vector_scores(items, ctx)
    assert typed[0] != untyped[0]  # both relation vectors exist and differ
    assert typed[1] == w2v[1]  # no location/region typed relation: the relation cosine adds 0


def test_missing_marts_are_a_resource_error(fresh_target: Target, tmp_path) -> None:
    from baselines.rules import ResourceMissing

    with pytest.raises(ResourceMissing, match="warehouse.teg_edges is missing"):
        re_.train_embeddings(fresh_target, "typed", PARAMS, tmp_path)
