"""dbt's Jinja context for sqlfluff's jinja templater (`make lint`, library_path in .sqlfluff).

sqlfluff's dbt templater needs a live database connection (it fills dbt's relations cache), so the
models are linted with the jinja templater instead. Its dbt builtins cover ref, source, config and
is_incremental; this adds what the project's macros use: ``var`` with the values of dbt_project.yml
(so loops over ``top_k_types`` render as in a real build), ``adapter.dispatch`` (the ``postgres__`` or
``default__`` variant, as dbt-postgres resolves it), ``dbt.type_*``, ``exceptions``, ``target`` (the
default build's schema), ``invocation_id``, ``local_md5``, and ``builtins.ref`` with ``execute`` false (the
project overrides ``ref``: macros/atomic_publish.sql).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from jinja2 import pass_context
from jinja2.utils import missing
from sqlfluff.core.templaters.builtins.dbt import RelationEmulator

_PROJECT_VARS: dict[str, Any] = yaml.safe_load(
    (Path(__file__).resolve().parent.parent / "dbt_project.yml").read_text(encoding="utf-8")
)["vars"]


def var(name: str, default: Any = None) -> Any:
    """dbt's var(): dbt_project.yml's value, else the default given at the call."""
    return _PROJECT_VARS.get(name, default)


class _Adapter:
    @staticmethod
    @pass_context
    def dispatch(context, macro_name: str, macro_namespace: str | None = None):
        """The macro dbt-postgres would dispatch to: postgres__<name>, else default__<name>."""
        for prefix in ("postgres__", "default__"):
            macro = context.resolve_or_missing(prefix + macro_name)
            if macro is not missing:
                return macro
        raise LookupError(f"no postgres__ or default__ variant of macro {macro_name}")


class _Dbt:
    """The cross-database type macros of dbt's `dbt` namespace, as dbt-postgres renders them."""

    @staticmethod
    def type_string() -> str:
        return "text"

    @staticmethod
    def type_bigint() -> str:
        return "bigint"


class _Exceptions:
    @staticmethod
    def raise_compiler_error(message: str) -> None:
        raise RuntimeError(message)


class _Builtins:
    """dbt's `builtins`: the original ref, as sqlfluff's dbt builtins emulate it."""

    @staticmethod
    def ref(*args: str, **kwargs: Any) -> RelationEmulator:
        return RelationEmulator(args[-1])


class _Target:
    """dbt's `target` of the default build on Postgres."""

    type = "postgres"
    name = "default"
    schema = "warehouse"


def local_md5(value: str) -> str:
    """dbt's local_md5(): the md5 hex digest of a string."""
    return hashlib.md5(value.encode()).hexdigest()


adapter = _Adapter()
target = _Target()
invocation_id = "00000000-0000-0000-0000-000000000000"  # dbt's id of the invocation (a build records it)
builtins = _Builtins()
execute = False  # dbt's parse phase: the ref override returns builtins.ref's relation unchanged
dbt = _Dbt()
exceptions = _Exceptions()


def tojson(value: Any, default: Any = None) -> str:
    """dbt's tojson(): the value as JSON (the funnel mart records each var's value with it)."""
    return json.dumps(value)
