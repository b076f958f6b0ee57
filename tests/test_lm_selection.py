"""Selection: the folds (test-matched and predicate-disjoint), cross-fitting, the verifier API, the
selection rows. Tests marked like tests/test_lm.py's `needs_lm` train MiniLM on a few hand-made items."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import random

import numpy as np
import pandas as pd
import pytest

from evaluation.datasets import items_frame
from evaluation.datasets.folds import (
    CUT,
    TEST_PROFILES,
    Folds,
    Profile,
    fold_profile,
    item_folds,
    matched_folds,
    overlap,
    pool_mask,
    predicate_folds,
    predicate_keys,
)
from evaluation.registry import ResourceMissing
from lm import models, runs
from lm.crossfit import CrossFit
from lm.plan import Plan
from lm.verifier import VerifierSpec, build_verifier
from warehouse.errors import ConfigurationError


def _have_lm_extra() -> bool:
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
        return False
    return "minilm" in models.available_models()


needs_lm = pytest.mark.skipif(not _have_lm_extra(), reason="needs the [lm] extra: pip install -e '.[lm]'")


def levy_holt_like(n_groups: int = 12, per_group: int = 6, seed: int = 0) -> pd.DataFrame:
    """Levy/Holt-style text items: predicates cluster by group, a few items link groups (one giant
    component), a train and a dev split; half the items are true."""
    rng = random.Random(seed)
    rows = []
    for g in range(n_groups):
        preds = [f"verb{g}x{i}" for i in range(4)]
        for i in range(per_group):
            p, h = rng.sample(preds, 2)
            if i == 0 and g:  # a bridge to the previous group: everything is connected
                h = f"verb{g - 1}x0"
            rows.append((p, h, rng.random() < 0.5))
    items = []
    for n, (p, h, label) in enumerate(rows):
        items.append(
            {
                "item_id": f"i{n:04d}",
                "dataset": "levy_holt",
                "split": "train" if n % 5 else "dev",
                "premise_text": f"Anna {p} Berlin",
                "hypothesis_text": f"Anna {h} Berlin",
                "premise_middle": p,
                "hypothesis_middle": h,
                "label": label,
                "extra": {},
            }
        )
    return items_frame(items)


def test_predicate_folds_never_split_a_predicate_and_stay_balanced():
    items = levy_holt_like()
    folds = item_folds(items, k=4, scheme="pd")
    premises, hypotheses = predicate_keys(items)
    fold_of = {p: f for f in range(4) for p in folds.predicates(f)}
    for i, f in enumerate(folds.of_item):
        p, h = fold_of[premises.iloc[i]], fold_of[hypotheses.iloc[i]]
        assert (f == p == h) if f != CUT else (p != h)  # inside a fold, or cut between two
    for f in range(4):  # no predicate of fold f occurs in an item of another fold
        held = folds.predicates(f)
        other = folds.of_item != f
        assert not (set(premises[other & (folds.of_item != CUT)]) & held)
    sizes = folds.sizes()
    assert sum(sizes) + folds.n_cut == len(items) and min(sizes) > 0
    assert max(sizes) <= 1.35 * len(items) / 4 and folds.n_cut < 0.2 * len(items)


def test_predicate_folds_do_not_depend_on_the_item_order():
    items = levy_holt_like(seed=3)
    premises, hypotheses = predicate_keys(items)
    order = list(range(len(items)))
    random.Random(1).shuffle(order)
    a = predicate_folds(list(premises), list(hypotheses), 5)
    b = predicate_folds([premises.iloc[i] for i in order], [hypotheses.iloc[i] for i in order], 5)
    assert a.hidden == b.hidden
    target = Profile(0.0, 10.0, 50.0)
    a = matched_folds(list(premises), list(hypotheses), 5, target)
    b = matched_folds([premises.iloc[i] for i in order], [hypotheses.iloc[i] for i in order], 5, target)
    assert a.hidden == b.hidden and a.share == b.share
    assert (a.of_item[order] == b.of_item).all()


def test_the_fold_profile_counts_each_item_against_its_fold_models_training():
    # predicates of 6 hand-made items; fold 1 hides "v" from its model's training items
    premises = ["x", "x", "y", "u", "x", "v"]
    hypotheses = ["y", "w", "x", "v", "v", "w"]
    folds = Folds(np.array([0, 0, 1, 1, 1, CUT]), (frozenset(), frozenset({"v"})), "tm", 0.5)
    # fold 0 scores items 0 (x-y) and 1 (x-w); its model trains on items 2, 3, 4 and 5 (y-x, u-v, x-v,
    # and the cut v-w: outside fold 0, no hidden predicate of it):
    #   item 0: pair seen (y-x, unordered), both seen; item 1: x and w seen, not as a pair
    # fold 1 scores items 2, 3, 4; its model trains on items 0 and 1 (x-y, x-w; item 5 touches v):
    #   item 2: pair seen; item 3: nothing; item 4: x seen, v hidden
    assert list(folds.training(1, pd.Series(premises), pd.Series(hypotheses))) == [1, 1, 0, 0, 0, 0]
    assert fold_profile(premises, hypotheses, folds) == Profile(40.0, 60.0, 80.0)
    among = np.array([True, False, True, True, False, True])  # items 0, 2, 3 (5 is cut)
    assert fold_profile(premises, hypotheses, folds, among) == Profile(66.7, 66.7, 66.7)
    # the same figures as overlap() of each fold's items against its training items
    frame = items_frame(
        [
            {
                "dataset": "levy_holt",
                "split": "train",
                "premise_text": f"a {p} b",
                "hypothesis_text": f"a {h} b",
            }
            | {"premise_middle": p, "hypothesis_middle": h, "label": True, "extra": {}}
            for p, h in zip(premises, hypotheses, strict=True)
        ]
    )
    fold0 = overlap(frame.iloc[[2, 3, 4, 5]], frame.iloc[[0, 1]])
    assert (fold0["pair"], fold0["both"], fold0["any"]) == (50.0, 100.0, 100.0)


def test_matched_folds_score_every_item_once_by_a_model_that_never_saw_it():
    items = levy_holt_like(n_groups=20, per_group=8)
    premises, hypotheses = predicate_keys(items)
    for target in (None, Profile(0.0, 10.0, 50.0)):
        folds = matched_folds(list(premises), list(hypotheses), 4, target)
        assert folds.n_cut == 0 and sum(folds.sizes()) == len(items)
        assert max(folds.sizes()) <= 1.3 * len(items) / 4
        pairs = [frozenset(x) for x in zip(premises, hypotheses, strict=True)]
        for f in range(4):
            train = folds.training(f, premises, hypotheses)
            assert not (train & (folds.of_item == f)).any()
            assert not (set(premises[train]) | set(hypotheses[train])) & folds.predicates(f)
            # a pair and its reverse stay in one fold: no evaluated pair is a training pair
            assert not {pairs[i] for i in np.flatnonzero(train)} & {
                pairs[i] for i in np.flatnonzero(folds.of_item == f)
            }
    free = matched_folds(list(premises), list(hypotheses), 4, None)
    assert free.share == 0 and not any(free.hidden)  # no target: every predicate may be seen
    strict = fold_profile(
        premises, hypotheses, matched_folds(list(premises), list(hypotheses), 4, Profile(0, 0, 0))
    )
    loose = fold_profile(premises, hypotheses, free)
    assert strict.any < loose.any and strict.both < loose.both  # holding out communities hides predicates


@pytest.mark.shared_data
def test_the_selection_folds_match_each_test_profile_on_the_shared_pools():
    from evaluation.datasets import read_levy_holt, read_sherliic_tsv
    from warehouse.settings import shared_data_dir

    shared = shared_data_dir()
    sherliic, teddy_li = shared / "sherliic" / "dev.tsv", shared / "levy_holt" / "teddy_li" / "orig"
    if not sherliic.is_file() or not (teddy_li / "train.txt").is_file():
        pytest.skip(f"needs the shared SherLIiC dev and Levy/Holt train/dev files under {shared}")
    pools = {
        "sherliic": items_frame(read_sherliic_tsv(sherliic)),
        "levy_holt": items_frame(
            read_levy_holt(teddy_li / "train.txt") + read_levy_holt(teddy_li / "dev.txt")
        ),
    }
    for name, pool in pools.items():
        premises, hypotheses = predicate_keys(pool)
        folds = item_folds(pool, 5, "tm")
        measured = fold_profile(premises, hypotheses, folds)
        assert measured.distance(TEST_PROFILES[name]) <= 3.0, (name, measured, TEST_PROFILES[name])
        assert folds.n_cut == 0 and min(folds.sizes()) >= 0.9 * len(pool) / 5
        strict = item_folds(pool, 5, "pd")
        assert fold_profile(premises, hypotheses, strict) == Profile(0.0, 0.0, 0.0)


def test_overlap_counts_pairs_and_predicates_seen_in_training():
    train = items_frame(
        [
            {"dataset": "levy_holt", "split": "train", "premise_text": "a x b", "hypothesis_text": "a y b"}
            | {"premise_middle": "x", "hypothesis_middle": "y", "label": True, "extra": {}},
            {"dataset": "levy_holt", "split": "train", "premise_text": "a z b", "hypothesis_text": "a w b"}
            | {"premise_middle": "Z", "hypothesis_middle": "w", "label": False, "extra": {}},
        ]
    )
    dev = items_frame(
        [
            {"dataset": "levy_holt", "split": "dev", "premise_text": t, "hypothesis_text": u}
            | {"premise_middle": p, "hypothesis_middle": h, "label": True, "extra": {}}
            for t, u, p, h in [
                ("c y d", "c x d", "y", "x"),  # the pair, reversed: seen
                ("c x d", "c w d", "x", "w"),  # both predicates seen, not as a pair
                ("c x d", "c v d", "x", "v"),  # one seen
                ("c u d", "c v d", "u", "v"),  # none
            ]
        ]
    )
    assert overlap(train, dev) == {"items": 4, "pair": 25.0, "both": 50.0, "any": 75.0}


def test_the_pool_is_never_a_test_file():
    items = pd.DataFrame(
        {
            "dataset": ["sherliic", "sherliic", "levy_holt", "levy_holt", "levy_holt/a_b", "zeichner"],
            "split": ["dev", "test", "train", "test", "dev", "all"],
        }
    )
    assert pool_mask(items).tolist() == [True, False, True, False, True, False]


@pytest.mark.parametrize("scheme", ["pd", "tm"])
def test_cross_fit_models_never_see_what_they_score(scheme):
    items = levy_holt_like()
    test = items.iloc[:5].assign(  # other pairs (a pool pair in a test file is scored out of fold too)
        split="test",
        item_id=lambda d: "t" + d["item_id"],
        premise_text=lambda d: d["premise_text"].str.replace("Anna", "Kim"),
    )
    scored = pd.concat([items, test], ignore_index=True)
    fit = CrossFit.of("levy_holt", scored, None, k=4, scheme=scheme)
    parts = fit.parts(scored)
    premises, hypotheses = predicate_keys(scored)
    counted = pd.Series(0, index=scored.index)
    for part in parts:
        counted[part.index] += 1
        if part.fold is None:  # the model of the whole pool scores the test items only
            assert set(scored.loc[part.index, "split"]) == {"test"}
            assert len(part.training.labels) == len(fit.pool)
            continue
        held = fit.folds.predicates(part.fold)
        train_keys = {k for k in zip(part.training.premises, part.training.hypotheses, strict=True)}
        assert not any(
            (scored.at[i, "premise_text"], scored.at[i, "hypothesis_text"]) in train_keys for i in part.index
        )
        assert not (
            {f"Anna {p} Berlin" for p in held} & (set(part.training.premises) | set(part.training.hypotheses))
        )
        if scheme == "pd":  # no predicate of an item inside the fold is a training item's
            inside = part.index[fit.fold_of(scored.loc[part.index]).to_numpy() == part.fold]
            scored_predicates = set(premises[inside]) | set(hypotheses[inside])
            trained = {t.split(" ")[1] for t in part.training.premises + part.training.hypotheses}
            assert not scored_predicates & trained
    pool = pool_mask(scored).to_numpy()
    # every pool item scored out of fold (cut ones by both of their folds), every test item once
    assert (counted[pool] >= 1).all() and (counted[pool] <= 2).all() and (counted[~pool] == 1).all()
    assert (counted[pool] == 2).sum() == fit.folds.n_cut
    assert len({p.n_nominal for p in parts}) == 1  # one recipe for every model of a cross-fit


def test_a_subset_is_scored_by_the_levy_holt_models_with_their_folds():
    from lm.methods import training_jobs

    items = levy_holt_like()
    subset = items.iloc[::3].assign(dataset="levy_holt/dirposi_dirnegi")
    plan = Plan.from_environment({"LM_FOLDS": "4"})
    assert plan.source("levy_holt/dirposi_dirnegi") == "levy_holt" and plan.source("sherliic") == "sherliic"
    served = training_jobs(subset, plan, items)
    own = {p.training.hash for p in training_jobs(items, plan)}
    assert served and {p.training.hash for p in served} <= own  # the same runs: no training of its own
    alone = training_jobs(subset, plan)  # Levy/Holt not loaded: the subset's own pool
    assert {p.training.hash for p in alone}.isdisjoint(own)


def test_new_plan_knobs_parse_and_round_trip():
    plan = Plan.from_environment(
        {
            "LM_PATTERNS": "y because x | x, which means that y;y because x",
            "LM_TRAIN_WITH": "sherliic=levy_holt",
            "LM_SCORE_WITH": "",
            "LM_DIRECTION": "0.5",
            "LM_FOLDS": "3",
            "LM_FOLD_SCHEME": "pd",
        }
    )
    assert plan.fold_scheme == "pd" and Plan.from_environment({}).fold_scheme == "tm"
    assert plan.extra_training("sherliic") == ("levy_holt",) and plan.extra_training("levy_holt") == ()
    assert plan.source("levy_holt/dirposi_dirnegi") == "levy_holt/dirposi_dirnegi"
    assert plan.folds == 3 and plan.direction == 0.5
    assert Plan.from_dict(plan.to_dict()) == plan
    # a joint run sees every item once per pattern: half the epochs of a one-pattern run
    assert plan.recipe("minilm", "y because x | x, which means that y", 0, 790).epochs == 3
    assert plan.recipe("minilm", "y because x", 0, 790).epochs == 5
    assert plan.recipe("minilm", "hypothesis only", 0, 790).direction_weight == 0.0
    for bad in (
        {"LM_TRAIN_WITH": "sherliic"},
        {"LM_DIRECTION": "-1"},
        {"LM_PATTERNS": "y because x | z"},
        {"LM_FOLD_SCHEME": "random"},
    ):
        with pytest.raises(ConfigurationError):
            Plan.from_environment(bad)


def test_runs_cached_before_the_direction_weight_keep_their_keys():
    recipe = runs.Recipe(model="minilm", pattern="y because x")
    # the key of a recipe without the later field, as computed before it existed
    import hashlib
    import json
    from dataclasses import asdict

    fields = {k: v for k, v in asdict(recipe).items() if k != "direction_weight"}
    before = hashlib.sha256(json.dumps({"recipe": fields, "train": "h"}, sort_keys=True).encode())
    assert runs.run_key(recipe, "h") == before.hexdigest()[:20]
    from dataclasses import replace

    assert runs.run_key(replace(recipe, direction_weight=1.0), "h") != runs.run_key(recipe, "h")


def test_direction_pairs_are_true_pairs_with_a_false_reverse():
    training = runs.TrainingSet(
        ["a x b", "a y b", "c x d", "c y d", "e x f"],
        ["a y b", "A x  b", "c y d", "c x d", "e y f"],
        [True, False, True, True, True],
        "t",
    )
    assert runs.direction_pairs(training) == [(0, 1)]  # c x d <-> c y d both true: a paraphrase


def test_a_verifier_is_named_by_its_model_patterns_data_and_seeds():
    items = levy_holt_like()
    spec = VerifierSpec("minilm", ("y because x",), dataset="levy_holt", seeds=(0, 1), folds=4)
    assert VerifierSpec.from_dict(spec.to_dict()) == spec
    verifier = build_verifier(spec, items)
    assert len(verifier.training.labels) == len(items)  # the whole pool: train and dev
    assert verifier.name.startswith("minilm [y because x] levy_holt #") and verifier.name.endswith(
        "seeds 0,1"
    )
    assert verifier.key == build_verifier(spec, items.sample(frac=1, random_state=1)).key
    other = build_verifier(VerifierSpec("minilm", ("y because x",), dataset="levy_holt", seeds=(0,)), items)
    assert other.key != verifier.key
    assert [(r.pattern, r.seed) for r, _ in verifier.runs()] == [("y because x", 0), ("y because x", 1)]
    with pytest.raises(ConfigurationError, match="unknown pattern"):
        VerifierSpec("minilm", ("x therefore y",))
    with pytest.raises(ConfigurationError, match="no labelled sherliic"):
        build_verifier(VerifierSpec("minilm", ("y because x",)), items)


@needs_lm
def test_score_pairs_is_the_mean_of_the_verifier_runs_and_is_cached(tmp_path):
    from lm.verifier import score_pairs

    items = levy_holt_like(n_groups=4, per_group=4)
    spec = VerifierSpec("minilm", ("y because x",), dataset="levy_holt", seeds=(0, 1), epochs=1, folds=3)
    verifier = build_verifier(spec, items)
    settings = runs.RunSettings(runs_dir=tmp_path)
    p, h = ["Anna verb0x1 Berlin", "Anna verb0x2 Berlin"], ["Anna verb0x2 Berlin", "Anna verb0x1 Berlin"]
    scores = score_pairs(verifier, p, h, settings=settings)
    assert scores.shape == (2,) and ((scores > 0) & (scores < 1)).all()
    each = [runs.run_scores(r, t, p, h, allow_compute=True, settings=settings) for r, t in verifier.runs()]
    np.testing.assert_allclose(scores, np.mean(each, axis=0))
    again = score_pairs(verifier, p[::-1], h[::-1], settings=settings, allow_compute=False)  # no training
    np.testing.assert_allclose(again, scores[::-1])
    untrained = build_verifier(
        VerifierSpec("minilm", ("y because x",), dataset="levy_holt", seeds=(5,)), items
    )
    with pytest.raises(ResourceMissing, match="not trained"):
        score_pairs(untrained, p, h, settings=settings, allow_compute=False)


def test_the_default_verifier_is_trained_by_the_default_plan_and_keyed_by_its_cosine_share():
    """One verifier concept: the ranking's default is the honest selection's pick (the mix), whose run
    the default `make lm` plan trains; the cosine share is part of the key, and a verifier without it keeps
    the key of its runs alone (the key rankings stored before)."""
    from lm.plan import DEFAULT_PLAN
    from lm.rank.cli import chosen_spec
    from lm.verifier import DEFAULT_VERIFIER, mix, plan_trains

    assert DEFAULT_VERIFIER.cosine_share == DEFAULT_PLAN.cosine_share > 0
    assert plan_trains(DEFAULT_PLAN, DEFAULT_VERIFIER)
    assert not plan_trains(DEFAULT_PLAN, VerifierSpec("minilm", ("y because x",), dataset="levy_holt/x"))
    assert chosen_spec(None, None, None, None, None) == DEFAULT_VERIFIER  # `make rank` without ARGS
    assert chosen_spec("mpnet", None, None, None, 0.0).cosine_share == 0.0
    assert VerifierSpec.from_dict(DEFAULT_VERIFIER.to_dict()) == DEFAULT_VERIFIER
    with pytest.raises(ConfigurationError, match="cosine share"):
        VerifierSpec("minilm", ("y because x",), cosine_share=1.0)
    np.testing.assert_allclose(mix(np.array([0.2, 1.0]), np.array([0.6, -0.2]), 0.75), [0.5, 0.1])

    items = levy_holt_like()
    plain = VerifierSpec("minilm", ("y because x",), dataset="levy_holt", seeds=(0,), folds=4)
    mixed = VerifierSpec(
        "minilm", ("y because x",), dataset="levy_holt", seeds=(0,), folds=4, cosine_share=0.5
    )
    a, b = build_verifier(plain, items), build_verifier(mixed, items)
    assert a.runs() == b.runs() and a.key != b.key  # the same runs; other scores, so another key
    keys = sorted(runs.run_key(r, t.hash) for r, t in a.runs())
    assert a.key == hashlib.sha256(json.dumps(keys).encode()).hexdigest()[:20]
    assert b.name == a.name + " + zero-shot cosine 0.5" and b.describe()["cosine_share"] == 0.5


@needs_lm
def test_a_trained_verifier_locates_the_weights_of_its_runs(tmp_path):
    items = levy_holt_like(n_groups=4, per_group=4)
    spec = VerifierSpec(
        "minilm", ("y because x",), dataset="levy_holt", seeds=(0,), epochs=1, folds=3, cosine_share=0.75
    )
    verifier = build_verifier(spec, items)
    settings = runs.RunSettings(runs_dir=tmp_path)
    with pytest.raises(ResourceMissing, match="not trained"):
        verifier.trained(settings=settings, allow_compute=False)
    trained = verifier.trained(settings=settings, show_progress=False)
    assert (trained.name, trained.key, trained.cosine_share) == (verifier.name, verifier.key, 0.75)
    assert [run.key for run in trained.runs] == [runs.run_key(r, t.hash) for r, t in verifier.runs()]
    assert all(run.weights.is_file() and run.patterns == ("y because x",) for run in trained.runs)
    assert trained.description == verifier.describe()


@needs_lm
def test_a_verifier_with_a_cosine_share_mixes_the_zero_shot_cosine_in(tmp_path):
    from lm.verifier import mix, score_pairs

    items = levy_holt_like(n_groups=4, per_group=4)
    spec = VerifierSpec(
        "minilm", ("y because x",), dataset="levy_holt", seeds=(0,), epochs=1, folds=3, cosine_share=0.75
    )
    verifier = build_verifier(spec, items)
    settings = runs.RunSettings(runs_dir=tmp_path)
    p, h = ["Anna verb0x1 Berlin", "Anna verb0x2 Berlin"], ["Anna verb0x2 Berlin", "Anna verb1x1 Berlin"]
    scores = score_pairs(verifier, p, h, settings=settings)
    ((recipe, training),) = verifier.runs()
    tuned = runs.run_scores(recipe, training, p, h, allow_compute=True, settings=settings)  # trained: scores
    cosine = runs.run_scores(
        runs.Recipe.zero_shot("minilm"), None, p, h, allow_compute=True, settings=settings
    )
    np.testing.assert_allclose(scores, mix(tuned, cosine, 0.75))
    assert not np.allclose(scores, tuned)


@needs_lm
def test_the_directional_loss_keeps_pairs_in_one_batch():
    import torch

    from lm.encoder import _paired_batches

    generator = torch.Generator().manual_seed(0)
    batches = _paired_batches(10, [(0, 1), (4, 7)], 4, generator)
    assert sorted(i for b in batches for i in b) == list(range(10))
    for i, j in [(0, 1), (4, 7)]:
        assert any(i in b and j in b for b in batches)


def test_the_verifier_of_a_plan_is_its_model_of_the_whole_pool():
    from lm.methods import training_jobs
    from lm.verifier import verifier_of_plan

    items = levy_holt_like()
    test = items.iloc[:3].assign(
        split="test", premise_text=lambda d: d["premise_text"].str.replace("Anna", "Kim")
    )
    items = pd.concat([items, test], ignore_index=True)
    plan = Plan.from_environment(
        {
            "LM_FINETUNE": "minilm:levy_holt",
            "LM_PATTERNS": "y because x",
            "LM_SEEDS": "2",
            "LM_DIRECTION": "1",
        }
    )
    spec = verifier_of_plan(plan, "levy_holt")
    assert spec == VerifierSpec("minilm", ("y because x",), dataset="levy_holt", seeds=(0, 1), direction=1.0)
    whole = [p for p in training_jobs(items, plan) if p.fold is None]
    assert len(whole) == 1
    planned = {
        runs.run_key(plan.recipe("minilm", "y because x", seed, whole[0].n_nominal), whole[0].training.hash)
        for seed in plan.seeds
    }
    verifier = build_verifier(spec, items)
    assert {runs.run_key(r, t.hash) for r, t in verifier.runs()} == planned  # `make lm` trains its runs
    assert verifier_of_plan(plan, "sherliic") is None


@needs_lm
def test_select_judges_a_candidate_on_the_folds_and_on_the_old_split(tmp_path):
    from lm import selection, selection_report
    from lm.plan import LmSettings

    items = levy_holt_like(n_groups=6, per_group=5)
    subset = items.iloc[::2].assign(dataset="levy_holt/dirposi_dirnegi")
    items = pd.concat([items, subset], ignore_index=True)
    spec = VerifierSpec("minilm", ("y because x",), dataset="levy_holt", seeds=(0, 1), epochs=1, folds=3)
    settings = LmSettings(run=runs.RunSettings(runs_dir=tmp_path / "runs"))
    variants = (selection.Variant(), selection.Variant(cosine=0.5), selection.Variant(reverse=1.0))
    rows = []
    for scheme in ("tm", "pd"):
        scores = selection.honest_scores(spec, items, settings, scheme=scheme, reverse=True, cosine=True)
        assert set(scores.judged["dataset"]) == {"levy_holt", "levy_holt/dirposi_dirnegi"}
        for s in [*scores.forward.values(), *scores.reverse.values()]:  # every pool item out of fold
            assert s.notna().all() and ((s > 0) & (s < 1)).all()
        assert scores.epochs == 1 and scores.train_seconds > 0 and 0 < scores.train_examples <= 20
        rows += selection.honest_rows(scores, variants)
    rows += selection.old_split_rows(spec, items, settings)
    frame = pd.DataFrame(rows)
    assert set(zip(frame.protocol, frame.dataset, frame.seed, strict=True)) == {
        (protocol, dataset, seed)
        for protocol, dataset in [
            ("tm_cv", "levy_holt"),
            ("tm_cv", "levy_holt/dirposi_dirnegi"),
            ("pd_cv", "levy_holt"),
            ("pd_cv", "levy_holt/dirposi_dirnegi"),
            ("old split", "levy_holt"),
        ]
        for seed in ("0", "1", "mean")
    }
    assert set(frame.variant) == {"fine-tuned", "cosine 0.5", "both orders 1"}
    assert frame[selection.METRICS].stack().between(0, 1).all()  # every figure in [0, 1] (ROC AUC too)
    cv = frame[(frame.protocol == "pd_cv") & (frame.dataset == "levy_holt")]
    assert (cv.n_items + cv.n_cut == 30).all() and (cv[["pair", "both", "any"]] == 0).all().all()
    tm = frame[(frame.protocol == "tm_cv") & (frame.dataset == "levy_holt")]
    assert (tm.n_items == 30).all() and (tm["any"] > 0).all()  # the matched folds: predicates seen
    # the subset's items were scored by Levy/Holt's fold models: nothing trained for it
    trained = {p.parent.name for p in (tmp_path / "runs").glob("*/weights.safetensors")}
    pool = items[items.dataset == "levy_holt"]
    fold_sets = {
        part.training.hash
        for scheme in ("tm", "pd")
        for part in CrossFit.of("levy_holt", pool, None, 3, scheme).parts(pool)
    }  # 3 folds per scheme (two of them may share their training items)
    assert len(trained) == len(fold_sets) * 2 + 2  # per seed, and the old split's model per seed
    merged = selection.merge(frame, None)
    again = selection.merge(frame.assign(f1=0.5), merged)  # a rerun replaces its rows
    assert len(again) == len(frame) and (again.f1 == 0.5).all()
    text = selection_report.markdown(again)
    assert "## levy_holt/dirposi_dirnegi" in text and "| old split |" in text and "| tm_cv |" in text
    assert selection_report.plot_cost(again, tmp_path / "cost.png").is_file()


@needs_lm
def test_the_mix_is_a_quarter_fine_tuned_and_three_quarters_cosine(tmp_path):
    from evaluation.registry import Context
    from lm.methods import ALLOW_COMPUTE, fine_tuned_scores, mix_scores, zero_shot_scores
    from lm.plan import LmSettings

    items = levy_holt_like(n_groups=4, per_group=4)
    plan = Plan.from_environment(
        {"LM_FINETUNE": "minilm:levy_holt", "LM_PATTERNS": "y because x", "LM_SEEDS": "1", "LM_FOLDS": "2"}
    )
    assert plan.cosine_share == 0.75
    plan = Plan.from_dict({**plan.to_dict(), "epochs": 1})
    ctx = Context(lm=LmSettings(plan=plan, run=runs.RunSettings(runs_dir=tmp_path)))
    ctx.cache[ALLOW_COMPUTE] = True
    mixed = mix_scores(items, "minilm", ctx, plan)
    tuned = fine_tuned_scores(items, "minilm", ("y because x",), ctx, plan)
    cosine = zero_shot_scores(items, "minilm", ctx)
    np.testing.assert_allclose(mixed, 0.25 * tuned + 0.75 * cosine)
    assert mixed.notna().all()


@needs_lm
def test_a_student_learns_its_teachers_scores_of_both_orders(tmp_path):
    from lm import selection
    from lm.plan import LmSettings
    from lm.verifier import score_pairs

    items = levy_holt_like(n_groups=3, per_group=4)
    common = {"dataset": "levy_holt", "seeds": (0,), "epochs": 1, "folds": 2}
    teacher = VerifierSpec("minilm", ("y because x",), cosine_share=0.5, **common)
    student = VerifierSpec("minilm", ("x, which means that y",), teacher=teacher, **common)
    assert VerifierSpec.from_dict(student.to_dict()) == student
    with pytest.raises(ConfigurationError, match="same pools"):
        VerifierSpec("minilm", ("y because x",), dataset="sherliic", teacher=teacher)
    settings = runs.RunSettings(runs_dir=tmp_path / "runs")
    with pytest.raises(ResourceMissing):  # the teacher is not trained: nothing is computed
        build_verifier(student, items, settings=settings, allow_compute=False)
    verifier = build_verifier(student, items, settings=settings)
    teacher_verifier = build_verifier(teacher, items, settings=settings)
    pool_premises, pool_hypotheses = list(items.premise_text), list(items.hypothesis_text)
    assert sorted(zip(verifier.training.premises, verifier.training.hypotheses, strict=True)) == sorted(
        list(zip(pool_premises, pool_hypotheses, strict=True))
        + list(zip(pool_hypotheses, pool_premises, strict=True))
    )
    expected = score_pairs(
        teacher_verifier, verifier.training.premises, verifier.training.hypotheses, settings=settings
    )
    np.testing.assert_allclose(verifier.training.labels, np.round(expected, 4))
    assert 0 < min(verifier.training.labels) and max(verifier.training.labels) < 1  # soft labels
    assert "distilled from minilm" in verifier.name
    assert score_pairs(verifier, pool_premises[:3], pool_hypotheses[:3], settings=settings).shape == (3,)
    # on the folds, each fold's student learns from that fold's teacher
    scores = selection.honest_scores(student, items, LmSettings(run=settings), scheme="tm", reverse=True)
    assert scores.forward[0].notna().all() and scores.reverse[0].notna().all()
    assert selection.candidate_name(student) == (
        "minilm [x, which means that y] levy_holt epochs 1 distilled from minilm [y because x] epochs 1"
        " seeds 0 + cosine 0.5"
    )
