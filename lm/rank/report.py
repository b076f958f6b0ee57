"""How the verifier's ranking compares with the paper's: verifier score against esr, one point per
candidate, with the rank correlations of the verifier score with esr and with Relv·σ·esr."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from lm.rank.store import ScoreStore, build_name
from warehouse.target import Target


def scored_candidates(target: Target, verifier_key: str, backend: str) -> pd.DataFrame:
    """The build's candidates (Relv, σ, esr, score, alignment) with this verifier's scores (inner join)."""
    columns = [
        *("candidate_key", "relv", "sigma", "esr", "score", "alignment", "premise_path", "hypothesis_path")
    ]
    with target.marts(read_only=True) as marts:
        rows = marts.rows(f"select {', '.join(columns)} from {marts.schema}.inference_candidates")
    candidates = pd.DataFrame(rows, columns=columns)
    with ScoreStore(target) as store:
        scores = store.scores(build_name(target), verifier_key, backend)
    frame = candidates.merge(scores, on="candidate_key", how="inner")
    for column in ("relv", "sigma", "esr", "score", "verifier_score"):
        frame[column] = frame[column].astype(float)
    return frame


def spearman(frame: pd.DataFrame, column: str) -> float:
    """Rank correlation of the verifier score with a column (NaN where it is undefined)."""
    if len(frame) < 3 or frame[column].nunique() < 2 or frame["verifier_score"].nunique() < 2:
        return math.nan  # undefined for a constant column (the small demo's esr can be 1 everywhere)
    return float(frame["verifier_score"].corr(frame[column], method="spearman"))


def plot_verifier_vs_esr(frame: pd.DataFrame, path: Path, title: str) -> Path:
    """Scatter of verifier score (y) against esr (x), straight and crossed rules apart; Spearman ρ with esr
    and with the paper's score in the legend."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 5), dpi=120)
    for alignment, marker in (("straight", "o"), ("crossed", "^")):
        part = frame[frame["alignment"] == alignment]
        if len(part):
            ax.scatter(part["esr"], part["verifier_score"], s=12, alpha=0.6, marker=marker, label=alignment)
    rho_esr, rho_score = (spearman(frame, column) for column in ("esr", "score"))
    ax.set_xlabel("esr (entity support ratio)")
    ax.set_ylabel("verifier score (entailment probability)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title, fontsize=9)
    legend = f"{len(frame)} candidates; Spearman ρ: esr {rho_esr:.2f}, Relv·σ·esr {rho_score:.2f}"
    ax.legend(title=legend, fontsize=8, title_fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
