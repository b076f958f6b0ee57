"""Filling the LM run cache in parallel: what `make lm` and `python -m lm.cli train` run first.

A job is one entry of the run cache (lm.runs): a fine-tuned run (dataset, model, pattern, seed,
and which model of the dataset's cross-fit: a fold's or the whole pool's), or a model's zero-shot pass
over every selected item (one job per model, because the zero-shot cache entry of a model is shared by all
datasets). Jobs whose scores are all cached are dropped; the others run in
`workers` processes (LM_WORKERS) with one torch thread each, longest first; every worker receives the
command's LmSettings as a value (nothing is read from its environment). Runs are independent, and on a 2-core
machine two one-thread processes train ~2.6x faster than one process with two threads (`make bench-lm`).
Afterwards the harness only reads the cache.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

import pandas as pd

from evaluation.registry import Context, ResourceMissing
from lm.methods import (
    ALLOW_COMPUTE,
    ITEMS,
    datasets_needed,
    run_label,
    seed_scores,
    training_jobs,
    zero_shot_scores,
)
from lm.models import get_model, model_dir
from lm.plan import LmSettings, Plan
from lm.runs import ZERO_SHOT
from warehouse.terminal import Progress

ALL_DATASETS = "*"


@dataclass(frozen=True)
class Job:
    model: str
    pattern: str  # a pattern of lm.patterns, HYPOTHESIS_ONLY, or runs.ZERO_SHOT
    dataset: str = ALL_DATASETS  # zero-shot jobs score every selected dataset
    seed: int = 0
    part: int | None = None  # which model of the dataset's cross-fit (methods.training_jobs)

    def label(self, settings: LmSettings) -> str:
        if self.pattern == ZERO_SHOT:
            return f"lm:{self.model} zero-shot"
        part = "" if self.part is None else f" part {self.part + 1}"
        return run_label(self.model, self.pattern, self.dataset, self.seed, settings.plan.seeds) + part

    def items(self, items: pd.DataFrame, plan: Plan | None = None) -> pd.DataFrame:
        """The job's dataset, and those its models train on (its source's and extra pools)."""
        if self.dataset == ALL_DATASETS:
            return items
        needed = {self.dataset} if plan is None else datasets_needed(self.dataset, plan)
        return items[items["dataset"].isin(needed)]

    def scored(self, items: pd.DataFrame) -> pd.DataFrame:
        return items if self.dataset == ALL_DATASETS else items[items["dataset"] == self.dataset]

    def fill(self, items: pd.DataFrame, settings: LmSettings, *, allow_compute: bool) -> None:
        """Train and score what is missing (ResourceMissing if something is and computing is not allowed)."""
        ctx = Context(lm=settings)  # the LM scores read no database
        ctx.cache[ALLOW_COMPUTE] = allow_compute
        ctx.cache[ITEMS] = self.items(items, settings.plan)  # where its models find their training items
        if self.pattern == ZERO_SHOT:
            zero_shot_scores(self.items(items), self.model, ctx)
        else:
            scored = self.scored(items)
            seed_scores(scored, self.model, self.pattern, self.seed, ctx, settings.plan, part=self.part)

    def cost(self, items: pd.DataFrame, settings: LmSettings) -> float:
        """Relative work, encoder passes x model size; the longest jobs start first, so that the workers
        finish close together (a big model's zero-shot pass can outlast a small model's fine-tuning)."""
        group = self.scored(items)
        if self.pattern == ZERO_SHOT:
            passes = len(set(group["premise_text"]) | set(group["hypothesis_text"]))
        else:
            passes = 0
            plan = settings.plan
            for number, job in enumerate(training_jobs(group, plan, self.items(items, plan))):
                if self.part is None or number == self.part:
                    recipe = plan.recipe(self.model, self.pattern, self.seed, job.n_nominal)
                    n_train = len(job.training.labels) * len(recipe.patterns)
                    passes += 3 * recipe.epochs * n_train + len(job.index)  # a step ~ 3 forward passes
        return passes * get_model(self.model).parameters_millions

    def is_cached(self, items: pd.DataFrame, settings: LmSettings) -> bool:
        try:
            self.fill(items, settings, allow_compute=False)
        except ResourceMissing:
            return False
        return True


def planned_jobs(
    items: pd.DataFrame,
    models: list[str],
    plan: Plan,
    *,
    zero_shot: bool = True,
    fine_tuned: bool = True,
    seeds: tuple[int, ...] = (),
) -> list[Job]:
    """Every job of the plan for these items: each model's zero-shot pass, then its fine-tuned runs."""
    jobs = []
    for model in models:
        jobs += [Job(model, ZERO_SHOT)] if zero_shot else []
        seen = set()  # one job per run: a subset scored by Levy/Holt's models shares that dataset's runs
        for dataset in sorted({str(d) for d in items["dataset"]}) if fine_tuned else ():
            patterns = plan.patterns_for(model, dataset)
            if not patterns:
                continue
            group = items[items["dataset"] == dataset]
            needed = items[items["dataset"].isin(datasets_needed(dataset, plan))]
            parts = training_jobs(group, plan, needed)
            for pattern in patterns:
                for seed in seeds or plan.seeds:
                    for number, part in enumerate(parts):
                        run = (
                            pattern,
                            seed,
                            plan.recipe(model, pattern, seed, part.n_nominal),
                            part.training.hash,
                        )
                        if run not in seen:
                            seen.add(run)
                            jobs.append(Job(model, pattern, dataset, seed, number))
    return jobs


WORKER_MEMORY_BYTES = 3 * 2**30  # one training process at its peak: 2.85 GB with mpnet, 1.4 GB with MiniLM


def default_workers() -> int:
    """Without LM_WORKERS (the --workers option): one per usable CPU core as far as memory allows
    (WORKER_MEMORY_BYTES each), else 1 when a GPU does the work."""
    import torch  # the [lm] extra: only once the LM stack is known to be there

    if torch.cuda.is_available():
        return 1
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(1, min(len(os.sched_getaffinity(0)), memory // WORKER_MEMORY_BYTES))


def fill_cache(items: pd.DataFrame, jobs: list[Job], settings: LmSettings, workers: int) -> int:
    """Run the jobs not cached yet in `workers` processes; returns how many ran. The first error stops the
    rest (the runs already finished stay cached)."""
    pending = [job for job in jobs if not job.is_cached(items, settings)]
    if not pending:
        print(f"LM cache: all {len(jobs)} jobs cached")
        return 0
    pending.sort(key=lambda job: -job.cost(items, settings))
    for model in sorted({job.model for job in pending}):
        model_dir(model, settings.run.cache_dir)  # unpack once here, not in two workers at the same time
    workers = max(1, min(workers, len(pending)))
    print(f"LM cache: {len(pending)} of {len(jobs)} jobs to run, {workers} worker(s)")
    if workers == 1:
        for job in Progress(pending, desc="LM jobs", unit="job"):
            job.fill(items, settings, allow_compute=True)
        return len(pending)
    # spawn: a fresh interpreter per worker (no forked torch/OpenMP or database state)
    context = multiprocessing.get_context("spawn")
    lines = context.Queue()
    for line in range(1, workers + 1):
        lines.put(line)
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker, initargs=(lines,))
    with pool, Progress(total=len(pending), desc="LM jobs", unit="job", position=0) as bar:
        futures = {pool.submit(_fill, job, job.items(items, settings.plan), settings): job for job in pending}
        for future in as_completed(futures):
            if future.exception() is not None:
                pool.shutdown(cancel_futures=True)  # the running jobs finish; the queued ones never start
                raise future.exception()
            bar.update(1)
            bar.set_postfix_str(futures[future].label(settings), refresh=True)
    return len(pending)


def _start_worker(lines) -> None:
    from lm import encoder  # torch: the workers train

    encoder.set_bar_line(lines.get())


def _fill(job: Job, items: pd.DataFrame, settings: LmSettings) -> None:
    job.fill(items, settings, allow_compute=True)
