"""Hypothesis-only probe (Li et al. 2022, "Language Models Are Poor Learners of Directional Inference").

A classifier that never sees the premise measures how much of a benchmark is solvable from annotation
artefacts of the hypothesis alone. Features (binary, scikit-learn DictVectorizer):
- `lemma=<l>`: lemmas of the hypothesis path (odd positions) when the item has one, else the lemmas of
  the hypothesis' predicate text (lemminflect, verb reading first). Levy/Holt items always use the
  text (the middle of the triple): the probe trains on the unparsed files, while items loaded into
  the warehouse also carry spaCy paths, and both must get the same features;
- no argument types: SherLIiC-dev's types come from its templates, which are withheld for a seeded share
  of the positives (see the shared data's README), so "has a type" is an artefact of our data assembly,
  not of the benchmark; the probe must not see it;
- `voice=passive|active` (baselines.lemma.is_passive on the path; text: a form of "be"/"get" followed by
  a participle), `reversed=<bool>` for paths.
Model: logistic regression (C=1, lbfgs), trained on each benchmark's train split (SherLIiC-dev
lm_split=train; Levy/Holt train), evaluated with the normalized AUC of Li et al. (evaluation.metrics) on
its dev split and, for Levy/Holt, on every directional subset's dev split. `python -m baselines.probe`
writes out/probe/probe.csv and .md; `artefact_strength()` returns the same table for the report.

Registered baseline "hypothesis-only probe": scores an item with the model of its benchmark; an item that
was itself a training item gets an out-of-fold score (5-fold cross-fitting), so no item is scored by a
model that saw its label.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import click
import numpy as np
import pandas as pd

from baselines.lemma import is_passive, path_is_reversed, path_lemmas
from evaluation.datasets import LEVY_HOLT_SUBSETS, items_frame, read_levy_holt, sherliic_splits
from evaluation.metrics import auc_normalized, roc_auc
from evaluation.registry import Context, register
from warehouse.command_line import CONTEXT, OUTPUT_FOLDER, run, version_option
from warehouse.settings import out_folder, shared_data_dir

if TYPE_CHECKING:
    from sklearn.pipeline import Pipeline

if __name__ == "__main__":
    # `python -m baselines.probe`: run the CLI of the properly imported module, so that its
    # baseline is registered once (under its module name, as evaluation.catalog imports it).
    import sys

    from baselines.probe import main as _main

    sys.exit(_main())

_PASSIVE_TEXT = re.compile(r"\b(is|was|are|were|be|been|being|get|gets|got)\s+(\w+ly\s+)?\w+(ed|en|wn|t)\b")
_WORD = re.compile(r"[a-z0-9']+")


@lru_cache(maxsize=50_000)
def _lemma(word: str) -> str:
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word)
    for pos in ("VERB", "NOUN", "ADJ", "AUX"):
        if pos in lemmas:
            return lemmas[pos][0]
    return word


def hypothesis_features(item: pd.Series) -> dict[str, float]:
    """The probe's features of one item: hypothesis only, never the premise."""
    features: dict[str, float] = {}
    path = item.get("hypothesis_path")
    if isinstance(path, str) and path and not str(item.get("dataset") or "").startswith("levy_holt"):
        for lemma in path_lemmas(path):
            features[f"lemma={lemma}"] = 1.0
        features[f"voice={'passive' if is_passive(path) else 'active'}"] = 1.0
        features[f"reversed={path_is_reversed(path)}"] = 1.0
    else:
        text = item.get("hypothesis_middle") or item.get("hypothesis_text") or ""
        text = str(text).lower()
        for word in _WORD.findall(text):
            features[f"lemma={_lemma(word)}"] = 1.0
        features[f"voice={'passive' if _PASSIVE_TEXT.search(text) else 'active'}"] = 1.0
    return features


def make_model() -> Pipeline:
    # imported here: scikit-learn takes ~1 s to import, which every command importing this module paid
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(DictVectorizer(), LogisticRegression(C=1.0, max_iter=2000))


def _features(items: pd.DataFrame) -> list[dict[str, float]]:
    return [hypothesis_features(row) for _, row in items.iterrows()]


def fit(train: pd.DataFrame) -> Pipeline:
    labels = train["label"].astype(bool).to_numpy()
    if labels.all() or not labels.any():
        raise ValueError("the probe needs both labels in its training split")
    return make_model().fit(_features(train), labels)


def predict(model: Pipeline, items: pd.DataFrame) -> np.ndarray:
    if len(items) == 0:
        return np.array([], dtype=float)
    return model.predict_proba(_features(items))[:, 1]


def out_of_fold(train: pd.DataFrame, n_splits: int = 5, seed: int = 0) -> np.ndarray:
    """Cross-fitted probabilities for the training items themselves."""
    labels = train["label"].astype(bool).to_numpy()
    scores = np.zeros(len(train), dtype=float)
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    for fit_idx, score_idx in folds.split(np.zeros(len(labels)), labels):
        model = fit(train.iloc[fit_idx])
        scores[score_idx] = predict(model, train.iloc[score_idx])
    return scores


def evaluate(model: Pipeline, items: pd.DataFrame) -> dict[str, float]:
    labels = items["label"].astype(bool).to_numpy()
    scores = predict(model, items)
    return {
        "n_items": len(items),
        "positive_rate": float(labels.mean()) if len(labels) else float("nan"),
        "auc_normalized": auc_normalized(labels, scores) if len(labels) else float("nan"),
        "roc_auc": roc_auc(labels, scores) if len(labels) else float("nan"),
    }


# --- the benchmarks the probe is run on (read without spaCy: the features need no parse) -----------


def levy_holt_file(shared: Path, folder: str, split: str) -> pd.DataFrame:
    return items_frame(read_levy_holt(shared / "levy_holt" / "teddy_li" / folder / f"{split}.txt"))


def levy_holt_folders(shared: Path) -> list[str]:
    root = shared / "levy_holt" / "teddy_li"
    return sorted(p.name for p in root.glob("*") if (p / "train.txt").is_file() and p.name != "orig")


def artefact_strength(shared: Path | None = None) -> pd.DataFrame:
    """The hypothesis-only probe's normalized AUC per benchmark split (the artefact-strength table).

    Rows: SherLIiC (train lm_split=train, eval lm_split=dev); Levy/Holt trained on orig/train, evaluated
    on orig/dev and every directional subset's dev; each subset also trained on its own train split.
    """
    shared = Path(shared or shared_data_dir())
    rows = []
    train, dev = sherliic_splits(shared)
    rows.append(
        {
            "benchmark": "SherLIiC-dev",
            "train": "lm_split=train",
            "eval": "lm_split=dev",
            "n_train": len(train),
            **evaluate(fit(train), dev),
        }
    )
    orig_train = levy_holt_file(shared, "orig", "train")
    orig_model = fit(orig_train)
    rows.append(
        {
            "benchmark": "Levy/Holt",
            "train": "orig/train",
            "eval": "orig/dev",
            "n_train": len(orig_train),
            **evaluate(orig_model, levy_holt_file(shared, "orig", "dev")),
        }
    )
    for folder in levy_holt_folders(shared):
        subset_dev = levy_holt_file(shared, folder, "dev")
        subset_train = levy_holt_file(shared, folder, "train")
        name = _subset_name(folder)
        rows.append(
            {
                "benchmark": f"Levy/Holt {name}",
                "train": "orig/train",
                "eval": f"{folder}/dev",
                "n_train": len(orig_train),
                **evaluate(orig_model, subset_dev),
            }
        )
        rows.append(
            {
                "benchmark": f"Levy/Holt {name}",
                "train": f"{folder}/train",
                "eval": f"{folder}/dev",
                "n_train": len(subset_train),
                **evaluate(fit(subset_train), subset_dev),
            }
        )
    return pd.DataFrame(rows)


def _subset_name(folder: str) -> str:
    pos, _, neg = folder.partition("_")
    return f"{LEVY_HOLT_SUBSETS.get(pos, pos)} vs {LEVY_HOLT_SUBSETS.get(neg, neg)}"


def write_report(table: pd.DataFrame, out_dir: Path | None = None) -> tuple[Path, Path]:
    """out/probe/probe.csv and probe.md."""
    out_dir = out_dir or out_folder() / "probe"
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out_dir / "probe.csv", out_dir / "probe.md"
    table.to_csv(csv_path, index=False)
    shown = pd.DataFrame(
        {
            "benchmark": table["benchmark"],
            "train": table["train"],
            "eval": table["eval"],
            "n train": table["n_train"].map(str),
            "n eval": table["n_items"].map(str),
            "positive rate": table["positive_rate"].map(lambda v: f"{v:.3f}"),
            "AUC_norm": table["auc_normalized"].map(lambda v: f"{v:.3f}"),
            "ROC AUC": table["roc_auc"].map(lambda v: f"{v:.3f}"),
        }
    )
    lines = [
        "# Hypothesis-only probe (Li et al. 2022): artefact strength",
        "",
        "Logistic regression on hypothesis-only features (lemmas, voice, reversal; no types).",
        "Normalized AUC: 0 = no",
        "better than the positive rate, 1 = perfect; high values mean the hypothesis alone gives the",
        "label away.",
        "",
        "Build: none. The probe reads only the benchmark files of the shared data folder, never a warehouse",
        "build, so its rows hold for every build.",
        "",
        shown.to_markdown(index=False, disable_numparse=True, colalign=["left"] * 3 + ["right"] * 5),
    ]
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return csv_path, md_path


# --- the registered baseline ---------------------------------------------------------------------------


def _training_sets(ctx: Context) -> dict[str, pd.DataFrame]:
    key = ("probe_training_sets", ctx.shared_data)
    if key not in ctx.cache:
        shared = Path(ctx.shared_data or shared_data_dir())
        ctx.cache[key] = {
            "sherliic": sherliic_splits(shared)[0],
            "levy_holt": levy_holt_file(shared, "orig", "train"),
        }
    return ctx.cache[key]


def _family(dataset: str) -> str | None:
    if dataset.startswith("sherliic"):
        return "sherliic"
    if dataset.startswith("levy_holt_hosseini"):
        return None  # Hosseini's dev = Teddy-Li's train + dev, lower-cased: no clean out-of-fold scores
    if dataset.startswith("levy_holt"):
        return "levy_holt"
    return None


def score_items(items: pd.DataFrame, training_sets: dict[str, pd.DataFrame]) -> pd.Series:
    """Probe probabilities; items of a training set get out-of-fold scores; unknown benchmarks NaN."""
    scores = pd.Series(np.nan, index=items.index, dtype=float)
    families = items["dataset"].map(lambda d: _family(str(d)))
    for family, group in items.groupby(families):
        train = training_sets[family]
        model = fit(train)
        scores[group.index] = predict(model, group)
        oof = dict(zip(_train_keys(train), out_of_fold(train), strict=True))
        for label, key in zip(group.index, _train_keys(group), strict=True):
            if key in oof:
                scores[label] = oof[key]
    return scores


def _train_keys(items: pd.DataFrame) -> pd.Index:
    """Item identity across loaders: the (premise, hypothesis) text pair."""
    return pd.Index(items["premise_text"].astype(str) + "\t" + items["hypothesis_text"].astype(str))


@register(
    "hypothesis-only probe",
    tunable=True,
    on_top_of_lemma=False,
    description="Li et al. 2022 artefact probe: logistic regression on hypothesis lemmas/voice",
)
def probe_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    return score_items(items, _training_sets(ctx))


@click.command(context_settings=CONTEXT)
@version_option
@click.option(
    "--shared-data",
    type=click.Path(file_okay=False, path_type=Path),
    help="The shared data folder (default: SHERLIIC_DATA, else ../shared/data).",
)
@click.option("--out", type=OUTPUT_FOLDER, help="Output folder (default out/probe).")
def cli(shared_data: Path | None, out: Path | None) -> None:
    """Hypothesis-only probe (`make probe`): artefact strength per benchmark.

    A classifier that never sees the premise, trained and evaluated on the benchmark files; writes
    probe.csv and probe.md."""
    table = artefact_strength(shared_data)
    csv_path, md_path = write_report(table, out)
    print(md_path.read_text(encoding="utf-8"))
    print(f"wrote {csv_path} and {md_path}")


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="python -m baselines.probe")
