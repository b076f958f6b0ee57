"""Learned combination of the baselines: logistic regression over their scores (beyond the paper).

Features: the raw score of every other registered baseline that can run (a baseline whose resource is
missing is left out; "Always yes", the hypothesis-only probes and this one are never features). Of the
language-model methods only the zero-shot cosines of the models `make lm` ran are features
(lm.plan.LmSettings.combination_features: fine-tuned LM scores of the combination's own training
items are in-sample and would be over-trusted); they are present once `make lm` has cached them. An
uncovered item (NaN) gets the column's minimum, as evaluation.evaluate.fill_uncovered does, plus a
`covered:<name>` 0/1 indicator for columns that are only partly covered. Columns are standardized
(z-scores over the training items), so the logistic-regression coefficients compare directly: they say
which scores carry the weight.

Training, per dataset: SherLIiC-dev items with lm_split=train (Schmitt & Schütze 2021); Levy/Holt and
each directional subset: its train split. An item of the training split gets an out-of-fold score (5-fold
cross-fitting), so no reported item is scored by a model that saw its label. The evaluation loop then
tunes the threshold like for every other row (SherLIiC `lm_dev`: threshold on lm_split=train; Levy/Holt
dev: threshold on train). Datasets without a training split (Zeichner) are not covered (NaN).

`python -m baselines.combination` evaluates this baseline on the loaded SherLIiC items exactly as
`make baselines` does (evaluation.evaluate: same training items, same threshold tuning, so its rows equal
out/baselines.md's) and writes them with the standardized coefficients of the SherLIiC model to
out/combination/{coefficients.csv, combination.md}.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click
import numpy as np
import pandas as pd

from builds.records import BuildRef
from evaluation.catalog import COMBINATION, load_all, registered_names
from evaluation.context import command_context
from evaluation.datasets import load_items
from evaluation.evaluate import evaluate_baseline
from evaluation.registry import REGISTRY, Context, ResourceMissing, register
from lm.plan import LmSettings
from warehouse.command_line import CONTEXT, OUTPUT_FOLDER, run, target_options, version_option
from warehouse.errors import print_error
from warehouse.settings import out_folder, shared_data_dir
from warehouse.target import ENGINES, Target

if TYPE_CHECKING:
    from sklearn.pipeline import Pipeline

if __name__ == "__main__":
    # `python -m baselines.combination`: run the CLI of the properly imported module, so that its
    # baseline is registered once (under its module name, as evaluation.catalog imports it).
    import sys

    from baselines.combination import main as _main

    sys.exit(_main())

log = logging.getLogger(__name__)

NAME = COMBINATION
NEVER_FEATURES = frozenset({NAME, "Always yes", "hypothesis-only probe"})


def feature_names(lm: LmSettings | None = None) -> list[str]:
    """Registered baselines used as features (see the module docstring), in catalog order; `lm`: the
    `lm:` settings whose models' zero-shot scores may be features (default: every model)."""
    lm_ok = set((lm or LmSettings()).combination_features())
    return [
        n for n in registered_names() if n not in NEVER_FEATURES and (not n.startswith("lm:") or n in lm_ok)
    ]


def lm_split(items: pd.DataFrame) -> pd.Series:
    """lm_split of SherLIiC-dev items (from the loader's `extra`), None elsewhere."""
    if "lm_split" in items.columns:
        return items["lm_split"]
    if "extra" not in items.columns:
        return pd.Series(None, index=items.index, dtype=object)
    return items["extra"].map(lambda e: e.get("lm_split") if isinstance(e, dict) else None)


def baseline_scores(items: pd.DataFrame, ctx: Context, names: list[str] | None = None) -> pd.DataFrame:
    """Raw scores of every usable baseline (columns) for `items` (rows); unavailable ones are skipped."""
    load_all()
    names = names if names is not None else feature_names(ctx.lm)
    columns: dict[str, pd.Series] = {}
    for name in names:
        try:
            columns[name] = REGISTRY[name].score(items, ctx).reindex(items.index).astype(float)
        except ResourceMissing as exc:
            log.info("combination: %s skipped (%s)", name, exc)
    return pd.DataFrame(columns, index=items.index)


@dataclass
class Features:
    """How raw score columns become the model's design matrix (fitted on the training items)."""

    fill: dict[str, float]
    indicators: list[str]
    duplicates: dict[str, str] = field(default_factory=dict)  # dropped column -> identical kept column

    @classmethod
    def fit(cls, scores: pd.DataFrame) -> Features:
        fill: dict[str, float] = {}
        indicators: list[str] = []
        duplicates: dict[str, str] = {}
        for name in scores.columns:
            col = scores[name]
            if col.notna().sum() == 0 or (col.dropna().nunique() < 2 and col.notna().all()):
                continue  # no information: never covered, or constant
            # a score identical to a kept one (e.g. w2v+typed_rel = word2vec when no relation vector
            # exists) would only split that one's weight
            twin = next((k for k in fill if scores[k].equals(col)), None)
            if twin is not None:
                duplicates[name] = twin
                continue
            fill[name] = float(col.min())
            if col.isna().any():
                indicators.append(name)
        return cls(fill, indicators, duplicates)

    @property
    def names(self) -> list[str]:
        return list(self.fill) + [f"covered:{n}" for n in self.indicators]

    def transform(self, scores: pd.DataFrame) -> np.ndarray:
        parts = [scores[n].fillna(v).to_numpy(float) for n, v in self.fill.items()]
        parts += [scores[n].notna().to_numpy(float) for n in self.indicators]
        return np.column_stack(parts) if parts else np.zeros((len(scores), 0))


def make_model() -> Pipeline:
    # imported here: scikit-learn takes ~1 s to import, which every command importing this module paid
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=5000))


@dataclass
class Combination:
    features: Features
    model: Pipeline

    def predict(self, scores: pd.DataFrame) -> np.ndarray:
        return self.model.predict_proba(self.features.transform(scores))[:, 1]

    def coefficients(self) -> pd.DataFrame:
        """Standardized coefficients (weight per standard deviation of the feature), largest |w| first."""
        coef = self.model[-1].coef_[0]
        table = pd.DataFrame({"feature": self.features.names, "coefficient": coef})
        table["abs"] = table["coefficient"].abs()
        table = table.sort_values("abs", ascending=False).drop(columns="abs").reset_index(drop=True)
        return table


def fit(scores: pd.DataFrame, labels: np.ndarray) -> Combination:
    labels = np.asarray(labels, dtype=bool)
    if labels.all() or not labels.any():
        raise ValueError("the combination needs both labels in its training split")
    features = Features.fit(scores)
    if not features.names:
        raise ValueError("no baseline score varies over the training items")
    model = make_model().fit(features.transform(scores), labels)
    return Combination(features, model)


def cross_fitted(scores: pd.DataFrame, labels: np.ndarray, n_splits: int = 5, seed: int = 0) -> np.ndarray:
    """Out-of-fold probabilities for the training items themselves."""
    labels = np.asarray(labels, dtype=bool)
    out = np.zeros(len(labels), dtype=float)
    n_splits = min(n_splits, int(labels.sum()), int((~labels).sum()))
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    for fit_idx, score_idx in folds.split(np.zeros(len(labels)), labels):
        combo = fit(scores.iloc[fit_idx], labels[fit_idx])
        out[score_idx] = combo.predict(scores.iloc[score_idx])
    return out


def training_mask(items: pd.DataFrame) -> pd.Series:
    """The combination's training items: SherLIiC lm_split=train; Levy/Holt (and subsets) split=train."""
    dataset = items["dataset"].astype(str) if "dataset" in items else pd.Series("sherliic", index=items.index)
    is_sherliic = dataset.str.startswith("sherliic")
    is_levy_holt = dataset.str.startswith("levy_holt") & ~dataset.str.startswith("levy_holt_hosseini")
    split = items["split"] if "split" in items else pd.Series(None, index=items.index, dtype=object)
    return (is_sherliic & (lm_split(items) == "train")) | (is_levy_holt & (split == "train"))


def _family(items: pd.DataFrame) -> pd.Series:
    """Which training items a scored item belongs with: its dataset (sherliic: every SherLIiC file)."""
    if "dataset" not in items:
        return pd.Series("sherliic", index=items.index)
    dataset = items["dataset"].astype(str)
    return dataset.where(~dataset.str.startswith("sherliic"), "sherliic")


def score_with(scores: pd.DataFrame, items: pd.DataFrame) -> tuple[pd.Series, Combination | None]:
    """Scores of the combination for items given their baseline scores; (scores, the last fitted model).

    One model per dataset family with training items; families without them stay NaN."""
    result = pd.Series(np.nan, index=items.index, dtype=float)
    combo = None
    train_all = training_mask(items)
    family = _family(items)
    for name in sorted(set(family[train_all])):
        in_family = family == name
        part, combo = _score_family(scores[in_family], items[in_family], train_all[in_family])
        result[in_family] = part
    return result, combo


def _score_family(
    scores: pd.DataFrame, items: pd.DataFrame, train_mask: pd.Series
) -> tuple[pd.Series, Combination]:
    result = pd.Series(np.nan, index=items.index, dtype=float)
    labels = items.loc[train_mask, "label"].astype(bool).to_numpy()
    combo = fit(scores[train_mask], labels)
    target = ~train_mask
    if target.any():
        result[target] = combo.predict(scores[target])
    result[train_mask] = cross_fitted(scores[train_mask], labels)
    return result, combo


@register(
    NAME,
    tunable=True,
    composite=True,
    description="logistic regression over the other baselines' scores (SherLIiC lm_split=train; "
    "Levy/Holt train)",
)
def combination_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    if not training_mask(items).any():  # no training items (Zeichner): skip the scoring
        return pd.Series(np.nan, index=items.index, dtype=float)
    scores = baseline_scores(items, ctx)
    result, combo = score_with(scores, items)
    if combo is not None:  # the fitted model, for `python -m baselines.combination`'s report
        key = str(items["dataset"].iloc[0]) if "dataset" in items else "sherliic"
        ctx.cache.setdefault("combination_models", {})[key] = combo
    return result


def write_report(
    combo: Combination, rows: pd.DataFrame, out_dir: Path | None = None, build: BuildRef | None = None
) -> tuple[Path, Path]:
    """out/combination/{coefficients.csv, combination.md}: the evaluation rows (evaluation.evaluate's
    columns) and the model's standardized coefficients; the report names the build whose marts the
    warehouse-backed scores read (default: the default build)."""
    out_dir = out_dir or out_folder() / "combination"
    out_dir.mkdir(parents=True, exist_ok=True)
    coef = combo.coefficients()
    csv_path, md_path = out_dir / "coefficients.csv", out_dir / "combination.md"
    coef.to_csv(csv_path, index=False)
    tuned_on = {"dev": "dev", "lm_dev": "lm_split=train", "test": "dev"}
    shown = pd.DataFrame(
        {
            "split": rows["split"],
            "threshold tuned on": rows["split"].map(tuned_on).fillna(""),
            "thr": rows["threshold"].map(lambda v: f"{v:.4f}"),
            "P": rows["precision"].map(lambda v: f"{v:.3f}"),
            "R": rows["recall"].map(lambda v: f"{v:.3f}"),
            "F1": rows["f1"].map(lambda v: f"{v:.3f}"),
            "covered": [f"{k}/{n}" for k, n in zip(rows["n_covered"], rows["n_items"], strict=True)],
        }
    )
    coef_shown = coef.assign(coefficient=coef["coefficient"].map(lambda v: f"{v:+.3f}"))
    lines = [
        "# Learned combination of the baselines",
        "",
        "Logistic regression over the baseline scores, trained on SherLIiC-dev lm_split=train "
        "(out-of-fold scores for the training items), evaluated as `make baselines` evaluates every "
        "method (these are the learned-combination rows of out/baselines.md).",
        "",
        f"Build: {(build or BuildRef()).label} (the warehouse-backed scores read its marts).",
        "",
        shown.to_markdown(index=False, disable_numparse=True, colalign=["left"] * 2 + ["right"] * 5),
        "",
        "## Standardized coefficients (weight per standard deviation)",
        "",
        coef_shown.to_markdown(index=False, disable_numparse=True, colalign=["left", "right"]),
    ]
    if combo.features.duplicates:
        lines += [
            "",
            "Left out as identical to a kept score on the training items: "
            + "; ".join(f"{d} = {k}" for d, k in combo.features.duplicates.items())
            + ".",
        ]
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return csv_path, md_path


@click.command(context_settings=CONTEXT)
@version_option
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    help="Output folder (default out/combination).",
)
@target_options(engines=ENGINES, build=True)
def cli(target: Target, out: Path | None) -> int:
    """Fit the learned combination and report its coefficients (`make combination`).

    Logistic regression over the baselines' scores, trained on SherLIiC-dev lm_split=train, evaluated on
    lm_split=dev; needs the benchmarks loaded (`make baselines`). Exit code 1 when they are not."""
    items = load_items(target, datasets=["sherliic"])
    if items.empty:
        print_error("no SherLIiC items loaded: run `make baselines` (it loads the benchmarks) first")
        return 1
    with command_context(target, shared_data=shared_data_dir(), lm=LmSettings.as_recorded()) as ctx:
        rows = evaluate_baseline(NAME, items, ctx).frame()
    combo = ctx.cache.get("combination_models", {}).get("sherliic")
    if combo is None:
        print_error("SherLIiC-dev has no lm_split=train items: nothing to train the combination on")
        return 1
    csv_path, md_path = write_report(combo, rows, out, ctx.build_ref)
    print(md_path.read_text(encoding="utf-8"))
    print(f"wrote {csv_path} and {md_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="python -m baselines.combination")
