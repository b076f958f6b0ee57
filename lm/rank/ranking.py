"""Rank every inference candidate of a build with a verifier, on either engine.

Both engines do the same per chunk of candidates (:func:`score_chunk`): render each typed rule into
premise and hypothesis sentences (lm.rank.candidates), score the pairs with the verifier
(lm.inference: length-sorted batches, torch or ONNX Runtime) and commit the chunk's rows to
results.verifier_scores. Candidates that already have a row for (build, verifier, backend) are left out
before anything is scored, so a killed run resumes where it stopped and a finished one is a no-op.

A ranking reads its build and writes only scores: no dbt run, no build record (the mart
candidate_verifier_scores is a view over the scores). Each row names the build's record
(builds.records.build_ref), which the ranking only reads.

- Postgres: the candidates are read from the build's marts and scored in this process, chunk by chunk.
- Spark: the candidates stay a Spark DataFrame; `mapInPandas` scores each chunk in a Spark task (one
  verifier per Python worker, loaded once) and the task commits its chunk to Postgres itself. The driver
  runs the chunks in waves of the session's parallelism, to show progress between waves.

The same candidate gets the same sentences and, on one backend, the same score within 1e-5 on either
engine (only the batches' padding differs; tests/test_lm_rank.py).
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import re
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from builds.records import BuildRef, build_ref
from lm.models import DEFAULT_CACHE_DIR, require_stack
from lm.rank.candidates import CANDIDATE_COLUMNS, candidate_frame, candidates_query, sentences_of
from lm.rank.store import ScoreStore
from lm.verifier import TrainedVerifier
from warehouse.errors import ConfigurationError
from warehouse.spark_raw import apply_spark_schema
from warehouse.target import Marts, Target
from warehouse.terminal import Progress

DEFAULT_CHUNK = 512  # candidates per committed chunk: what a kill can cost
SAFE_VALUE = re.compile(r"[a-z0-9_-]+")  # build names, verifier keys, backends: inlined as partition values


@dataclass(frozen=True)
class RankSettings:
    backend: str = "torch"  # lm.inference.BACKENDS
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)  # per scoring process (Spark: 1)
    batch_size: int = 64
    chunk_size: int = DEFAULT_CHUNK
    cache_dir: Path = DEFAULT_CACHE_DIR  # the unpacked models and the ONNX exports
    show_progress: bool = True


@dataclass(frozen=True)
class RankSummary:
    build: str
    build_id: int | None  # the build's record (builds.builds) whose candidates were ranked
    verifier: str  # name
    verifier_key: str
    backend: str
    engine: str
    candidates: int  # in the build
    already: int  # had a score before this run
    scored: int  # scored now (rows written)
    seconds: float

    def line(self) -> str:
        rate = f", {self.scored / self.seconds:.0f} pairs/s" if self.scored and self.seconds else ""
        what = "nothing to do" if not self.scored else f"scored {self.scored} ({self.seconds:.1f} s{rate})"
        build = BuildRef(self.build, self.build_id).label
        return (
            f"build {build}, verifier {self.verifier} ({self.backend}, {self.engine}): "
            f"{self.candidates} candidates, {self.already} scored before; {what}"
        )


def score_chunk(
    store: ScoreStore,
    build: BuildRef,
    verifier_key: str,
    backend: str,
    chunk: pd.DataFrame,
    scorer,
) -> int:
    """Render, score and commit one chunk of candidate rows (CANDIDATE_COLUMNS); returns rows written."""
    premises, hypotheses = sentences_of(chunk)
    scores = scorer.score(premises, hypotheses)
    keys = list(chunk["candidate_key"])
    return store.write(build, verifier_key, backend, keys, scores, premises, hypotheses)


def _scorer(verifier: TrainedVerifier, settings: RankSettings, threads: int):
    from lm import inference  # torch and onnxruntime: only once something is scored

    return inference.cached_scorer(
        verifier.runs,
        settings.backend,
        threads=threads,
        batch_size=settings.batch_size,
        cache_dir=settings.cache_dir,
        cosine_share=verifier.cosine_share,
    )


def require_candidates(marts: Marts) -> None:
    """One ConfigurationError line when the build of `marts` has no inference_candidates to rank."""
    if not marts.has_table(marts.schema, "inference_candidates"):
        target = marts.target
        named = f" --build {target.build}" if target.build else ""
        raise ConfigurationError(
            f"no inference_candidates in {target.describe()} (schema {marts.schema}): build it first "
            f"(`sherliic-dbt run{named}`; `make demo` builds the demo)"
        )


def rank_candidates(target: Target, verifier: TrainedVerifier, settings: RankSettings) -> RankSummary:
    """Score every candidate of the Target's build that has no score of this verifier and backend yet."""
    require_stack()
    build = build_ref(target)
    start = time.perf_counter()
    with ScoreStore(target) as store:
        store.record(verifier)
        done = store.scored_keys(build.name, verifier.key, settings.backend)
        with target.marts(read_only=True) as marts:
            require_candidates(marts)
            if marts.engine == "spark":
                total, todo, scored = _rank_on_spark(target, marts, verifier, settings, build, done)
                copy_to_spark(marts, store, verifier, settings.backend, build.name)
            else:
                total, todo, scored = _rank_here(marts, store, verifier, settings, build, done)
    return RankSummary(
        build=build.name,
        build_id=build.build_id,
        verifier=verifier.name,
        verifier_key=verifier.key,
        backend=settings.backend,
        engine=target.engine,
        candidates=total,
        already=total - todo,
        scored=scored,
        seconds=time.perf_counter() - start,
    )


def rank_in_child_process(target: Target, verifier: TrainedVerifier, settings: RankSettings) -> RankSummary:
    """rank_candidates in a spawned child process. On Spark the process that held a session keeps its JVM,
    and with it the catalog's one-process Derby metastore, until it exits: a caller that lets another
    process use the catalog afterwards (dbt, a spark-submit) ranks in a child."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(rank_candidates, target, verifier, settings).result()


def _progress(total: int, done: int, settings: RankSettings, verifier: TrainedVerifier) -> Progress:
    return Progress(
        total=total,
        initial=done,
        unit="pair",
        desc=f"rank {verifier.model} {settings.backend}",
        disable=not settings.show_progress,
    )


def _rank_here(
    marts: Marts,
    store: ScoreStore,
    verifier: TrainedVerifier,
    settings: RankSettings,
    build: BuildRef,
    done: set[str],
) -> tuple[int, int, int]:
    """(candidates, candidates to score, rows written)."""
    candidates = candidate_frame(marts.rows(candidates_query(marts.schema)))
    todo = candidates[~candidates["candidate_key"].isin(done)].reset_index(drop=True)
    if todo.empty:
        return len(candidates), 0, 0
    scorer = _scorer(verifier, settings, settings.threads)
    scored = 0
    with _progress(len(candidates), len(candidates) - len(todo), settings, verifier) as bar:
        for start in range(0, len(todo), settings.chunk_size):
            chunk = todo.iloc[start : start + settings.chunk_size]
            scored += score_chunk(store, build, verifier.key, settings.backend, chunk, scorer)
            bar.update(len(chunk))
    return len(candidates), len(todo), scored


def _rank_on_spark(
    target: Target,
    marts: Marts,
    verifier: TrainedVerifier,
    settings: RankSettings,
    build: BuildRef,
    done: set[str],
) -> tuple[int, int, int]:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = marts.connection
    candidates = spark.sql(candidates_query(marts.schema))
    total = candidates.count()
    if done:
        scored_before = spark.createDataFrame([(key,) for key in sorted(done)], "candidate_key string")
        candidates = candidates.join(scored_before, "candidate_key", "left_anti")
    # chunk numbers in the order of the stable key: chunk i holds the same candidates in every run
    order = Window.orderBy("candidate_key")
    todo = candidates.withColumn(
        "chunk", F.floor((F.row_number().over(order) - 1) / settings.chunk_size).cast("long")
    ).cache()
    n_todo = todo.count()
    if not n_todo:
        todo.unpersist()
        return total, 0, 0
    n_chunks = math.ceil(n_todo / settings.chunk_size)
    wave = max(1, spark.sparkContext.defaultParallelism)
    score = _partition_scorer(target.on_postgres(), verifier, settings, build)
    scored = 0
    with _progress(total, total - n_todo, settings, verifier) as bar:
        for first in range(0, n_chunks, wave):
            chunks = todo.where(F.col("chunk").between(first, first + wave - 1)).repartition(wave, "chunk")
            written = chunks.mapInPandas(score, "chunk long, n_candidates long, n_written long").collect()
            scored += sum(row.n_written for row in written)
            bar.update(sum(row.n_candidates for row in written))
    todo.unpersist()
    return total, n_todo, scored


def copy_to_spark(
    marts: Marts, store: ScoreStore, verifier: TrainedVerifier, backend: str, build: str
) -> int:
    """Spark: the ranking's rows (from Postgres, where they are kept) into the catalog's partition of
    (build, verifier, backend) of results.verifier_scores, for the dbt mart; returns the rows copied."""
    from pyspark.sql import functions as F

    spark = marts.connection
    apply_spark_schema(spark)  # results.* in a catalog created before they existed
    if not (
        SAFE_VALUE.fullmatch(build) and SAFE_VALUE.fullmatch(verifier.key) and SAFE_VALUE.fullmatch(backend)
    ):
        raise ValueError(f"unexpected partition value in {(build, verifier.key, backend)}")
    known = {row.verifier_key for row in spark.table("results.verifiers").select("verifier_key").collect()}
    if verifier.key not in known:
        spark.createDataFrame(
            [(verifier.key, verifier.name, json.dumps(verifier.description, sort_keys=True))],
            "verifier_key string, verifier_name string, description string",
        ).withColumn("created_at", F.current_timestamp()).write.insertInto("results.verifiers")
    rows = store.scores(build, verifier.key, backend)
    columns = ["candidate_key", "verifier_score", "premise_sentence", "hypothesis_sentence"]
    schema = (
        "candidate_key string, verifier_score double, premise_sentence string, hypothesis_sentence string"
    )
    frame = spark.createDataFrame(list(rows[columns].itertuples(index=False, name=None)), schema)
    frame.createOrReplaceTempView("ranked_candidates")
    spark.sql(
        f"insert overwrite table results.verifier_scores partition "
        f"(build = '{build}', verifier_key = '{verifier.key}', backend = '{backend}') "
        f"select {', '.join(columns)}, current_timestamp() as scored_at from ranked_candidates"
    )
    spark.catalog.dropTempView("ranked_candidates")
    return len(rows)


def _partition_scorer(postgres: Target, verifier: TrainedVerifier, settings: RankSettings, build: BuildRef):
    """The function a Spark task runs on its partition's candidate rows: each chunk rendered, scored and
    committed to Postgres by the task (one verifier per Python worker: lm.inference caches it)."""
    key, backend = verifier.key, settings.backend

    def score(frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        frames = [frame for frame in frames if len(frame)]
        out = []
        if frames:
            rows = pd.concat(frames, ignore_index=True)
            scorer = _scorer(verifier, settings, threads=1)  # the tasks are the parallelism
            with ScoreStore(postgres) as store:
                for chunk_id, chunk in rows.groupby("chunk", sort=True):
                    chunk = chunk[list(CANDIDATE_COLUMNS)].sort_values("candidate_key")
                    written = score_chunk(store, build, key, backend, chunk, scorer)
                    out.append((int(chunk_id), len(chunk), written))
        yield pd.DataFrame(out, columns=["chunk", "n_candidates", "n_written"], dtype="int64")

    return score
