"""results.verifiers and results.verifier_scores (warehouse/schema/006_verifier_scores.sql): where a
ranking's scores go, in Postgres on either engine.

A ranking writes its scores in chunks, each committed on its own: a killed run loses at most the chunk it
was scoring, and the next run scores only the candidates that have no row yet (none twice, none lost).
Rows are keyed by (build, verifier, backend, candidate); a row that exists is never replaced
(`on conflict do nothing`), so two rankings of the same build never write a candidate twice either. Each
row also names the record of the build whose candidates were read (build_id, builds.builds), so a report
can say which build a score came from; a ranking only reads that record, never writes one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pandas as pd

from builds.records import BuildRef
from lm.verifier import TrainedVerifier
from warehouse.target import Target


def build_name(target: Target) -> str:
    """The key of the Target's build in the results: its name, or "default" (Target.build_name)."""
    return target.build_name


class ScoreStore:
    """The verifier results of one Postgres database, on one open connection (use as a context
    manager)."""

    def __init__(self, target: Target):
        self.target = target.on_postgres()
        self._conn = None

    def __enter__(self) -> ScoreStore:
        self.target.ensure_schema()
        self._conn = self.target.connect()
        return self

    def __exit__(self, *exc) -> None:
        self._conn.close()

    def record(self, verifier: TrainedVerifier) -> None:
        """The verifier's row (name and description), once."""
        with self._conn.transaction():
            self._conn.execute(
                "insert into results.verifiers (verifier_key, verifier_name, description) values (%s, %s, %s)"
                " on conflict (verifier_key) do nothing",
                (verifier.key, verifier.name, json.dumps(verifier.description, sort_keys=True)),
            )

    def scored_keys(self, build: str, verifier_key: str, backend: str) -> set[str]:
        with self._conn.transaction():
            rows = self._conn.execute(
                "select candidate_key from results.verifier_scores"
                " where build = %s and verifier_key = %s and backend = %s",
                (build, verifier_key, backend),
            ).fetchall()
        return {key for (key,) in rows}

    def write(
        self,
        build: BuildRef,
        verifier_key: str,
        backend: str,
        keys: Sequence[str],
        scores: Sequence[float],
        premises: Sequence[str],
        hypotheses: Sequence[str],
    ) -> int:
        """One chunk of scores of `build`'s candidates, committed; returns the rows written (existing
        ones are kept)."""
        rows = [
            (build.name, build.build_id, verifier_key, backend, k, float(s), p, h)
            for k, s, p, h in zip(keys, scores, premises, hypotheses, strict=True)
        ]
        with self._conn.transaction(), self._conn.cursor() as cursor:
            cursor.executemany(
                "insert into results.verifier_scores (build, build_id, verifier_key, backend, candidate_key,"
                " verifier_score, premise_sentence, hypothesis_sentence)"
                " values (%s, %s, %s, %s, %s, %s, %s, %s) on conflict do nothing",
                rows,
            )
            return max(0, cursor.rowcount)

    def scores(self, build: str, verifier_key: str | None = None, backend: str | None = None) -> pd.DataFrame:
        """The scores of a build (optionally of one verifier and backend) with the verifier's name and the
        record of the build each was ranked on (build_id)."""
        sql = (
            "select scores.verifier_key, verifiers.verifier_name, scores.backend, scores.candidate_key,"
            " scores.verifier_score, scores.premise_sentence, scores.hypothesis_sentence, scores.build_id"
            " from results.verifier_scores as scores"
            " inner join results.verifiers as verifiers on scores.verifier_key = verifiers.verifier_key"
            " where scores.build = %s"
        )
        params: list = [build]
        if verifier_key is not None:
            sql += " and scores.verifier_key = %s"
            params.append(verifier_key)
        if backend is not None:
            sql += " and scores.backend = %s"
            params.append(backend)
        with self._conn.transaction():
            cursor = self._conn.execute(sql + " order by scores.verifier_key, scores.candidate_key", params)
            columns = [c.name for c in cursor.description]
            return pd.DataFrame(cursor.fetchall(), columns=columns)
