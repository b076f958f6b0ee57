"""Project-wide locations, overridable by environment variables."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DBT_PROJECT_DIR = PROJECT_ROOT / "dbt_project"


def out_folder() -> Path:
    """The folder of reports, exports and caches of results: SHERLIIC_OUT, else out/ in the checkout (read
    when called, by a command as it starts; never at import)."""
    return Path(os.environ.get("SHERLIIC_OUT") or PROJECT_ROOT / "out")


def shared_data_dir() -> Path:
    """The shared real data folder (../shared/data beside the checkout unless SHERLIIC_DATA is set)."""
    return Path(os.environ.get("SHERLIIC_DATA", PROJECT_ROOT.parent / "shared" / "data"))


def require_shared_data() -> Path:
    """Return the shared data folder or raise a clear error when it is absent."""
    path = shared_data_dir()
    if not path.is_dir():
        raise FileNotFoundError(f"shared data folder not found: {path} (set SHERLIIC_DATA to its location)")
    return path
