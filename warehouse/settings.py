"""Project-wide locations, overridable by environment variables, and the list of every SHERLIIC_*
variable the project reads (:data:`SETTINGS`), which each command checks at start
(:func:`check_environment`)."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path

from warehouse.errors import ConfigurationError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DBT_PROJECT_DIR = PROJECT_ROOT / "dbt_project"
PREFIX = "SHERLIIC_"
# Every SHERLIIC_* variable a command reads -> what it sets. A new setting is added here (a test compares
# this list with the names the code, the dbt profile and the Makefile read); any other SHERLIIC_* name in
# the environment is refused at start, so a misspelt setting is never silently ignored.
SETTINGS: dict[str, str] = {
    "SHERLIIC_ENGINE": "where the warehouse lives: postgres or spark",
    "SHERLIIC_PGDATA": "the embedded Postgres server's data directory; default .pgdata/",
    "SHERLIIC_BUILD": "a named build (its own marts schema)",
    "SHERLIIC_OUT": "the output folder; default out/",
    "SHERLIIC_DATA": "the shared real data folder; default ../shared/data",
    "SHERLIIC_SPARK_DIR": "the Spark engine's local catalog; default .spark/",
    "SHERLIIC_SPARK_MASTER": "the Spark master; default local[2]",
    "SHERLIIC_SPARK_SHUFFLE_PARTITIONS": "Spark's shuffle partitions; default 8",
    "SHERLIIC_SPARK_LOG_LEVEL": "Spark's log level; default error",
    "SHERLIIC_SPARK_DBT_THREADS": "dbt's threads on Spark; default 2",
    "SHERLIIC_LM_CACHE": "the unpacked language models; default .cache/lm",
    "SHERLIIC_BERANT_I": "Berant I's rule file; default: the shared data folder's",
    "SHERLIIC_BERANT_II": "Berant II's rule file; default: the shared data folder's",
    "SHERLIIC_PPDB": "the PPDB rule file; default: the shared data folder's",
    "SHERLIIC_PATTY_PATTERNS": "Patty's pattern file; default: the shared data folder's",
    "SHERLIIC_PATTY_SUBSUMPTIONS": "Patty's subsumption file; default: the shared data folder's",
    "SHERLIIC_SCHOENMACKERS": "Schoenmackers' rule file; default: the shared data folder's",
    "SHERLIIC_CHIRPS": "the Chirps rule file; default: the shared data folder's",
    "SHERLIIC_TEST": "the SherLIiC test file of `make baselines` / `make lm`",
    "SHERLIIC_SPARK_TEST_INSTANCES": "the size of the Spark engine's test graph (tests)",
}
# What sherliic-dbt hands dbt, or a user the dbt profile (dbt_project/profiles.yml and macros; builds.runner,
# warehouse.engine.dbt_env): known names whose values dbt reads, so they are not checked here
PROFILE_VARIABLES = frozenset(
    {
        "SHERLIIC_BUILD_CONTEXT",
        "SHERLIIC_SPARK_THRIFT_HOST",
        "SHERLIIC_SPARK_THRIFT_PORT",
        "SHERLIIC_SPARK_THRIFT_USER",
    }
)


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Refuse, in one line, a SHERLIIC_* variable of `environ` (default this process's) that no command
    reads (with the closest known name) or one set to the empty string (unset it for the default). The
    values themselves are checked where they are read (the Target's in Target.from_environment)."""
    environ = os.environ if environ is None else environ
    for name in sorted(environ):
        if not name.startswith(PREFIX) or name in PROFILE_VARIABLES:
            continue
        if name not in SETTINGS:
            close = difflib.get_close_matches(name, [*SETTINGS, *PROFILE_VARIABLES], n=1, cutoff=0.75)
            hint = f"did you mean {close[0]}?" if close else f"the known ones: {', '.join(sorted(SETTINGS))}"
            raise ConfigurationError(f"unknown setting {name} in the environment; {hint}")
        if not environ[name].strip():
            raise ConfigurationError(
                f"{name} is set but empty: unset it for the default, or give a value ({SETTINGS[name]})"
            )


def out_folder() -> Path:
    """The folder of reports, exports and caches of results: SHERLIIC_OUT, else out/ in the checkout (read
    when called, by a command as it starts; never at import)."""
    return Path(os.environ.get("SHERLIIC_OUT") or PROJECT_ROOT / "out")


def shared_data_dir() -> Path:
    """The shared real data folder (../shared/data beside the checkout unless SHERLIIC_DATA is set)."""
    return Path(os.environ.get("SHERLIIC_DATA") or PROJECT_ROOT.parent / "shared" / "data")


def require_shared_data() -> Path:
    """Return the shared data folder or raise a clear error when it is absent."""
    path = shared_data_dir()
    if not path.is_dir():
        raise FileNotFoundError(f"shared data folder not found: {path} (set SHERLIIC_DATA to its location)")
    return path
