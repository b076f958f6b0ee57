"""The dbt-core macro the project overrides with a modified copy (macros/atomic_publish.sql:
get_fixture_sql) still matches the installed dbt-core's original, apart from the marked addition: a dbt
upgrade that changes the original fails here, naming the macro, instead of silently running old code."""

from __future__ import annotations

import re
from pathlib import Path

import dbt.include.global_project as global_project

from warehouse.settings import DBT_PROJECT_DIR

# (our file, the macro, dbt-core's file under include/global_project)
COPIED_MACROS = [
    ("macros/atomic_publish.sql", "get_fixture_sql", "macros/unit_test_sql/get_fixture_sql.sql"),
]
ADDITION = re.compile(r"\{#-- sherliic:.*?\{#-- /sherliic --#\}\n", re.S)


def macro_text(text: str, name: str) -> str:
    found = re.search(r"\{% macro " + name + r"\(.*?\{% endmacro %\}", text, re.S)
    assert found, f"macro {name} not found"
    return found.group(0)


def test_copied_macros_match_the_installed_dbt_core() -> None:
    installed = Path(global_project.__file__).parent
    for ours, name, original in COPIED_MACROS:
        copy = macro_text((DBT_PROJECT_DIR / ours).read_text(), name)
        assert ADDITION.search(copy), f"{ours}: the addition to {name} is not marked"
        upstream = macro_text((installed / original).read_text(), name)
        assert ADDITION.sub("", copy) == upstream, (
            f"dbt-core's {name} ({original}) changed since {ours} copied it: redo the copy from the "
            "installed original and re-apply the marked addition"
        )
