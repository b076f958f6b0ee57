"""No reference to a file that does not exist: every repository path named in the README, docs/, the
Makefile, Python comments and docstrings, the dbt project and sql/ must exist (generated paths, those
.gitignore covers such as out/, excepted)."""

from __future__ import annotations

import ast
import fnmatch
import io
import re
import tokenize
from pathlib import Path

import pytest

from warehouse.settings import DBT_PROJECT_DIR, PROJECT_ROOT


def gitignore_patterns() -> list[str]:
    lines = (PROJECT_ROOT / ".gitignore").read_text().splitlines()
    return [line.strip().rstrip("/") for line in lines if line.strip() and not line.startswith("#")]


IGNORED = gitignore_patterns()


def is_ignored(reference: str) -> bool:
    """Whether .gitignore covers the path or one of its folders (generated output)."""
    parts = reference.strip("/").split("/")
    for end in range(1, len(parts) + 1):
        prefix = "/".join(parts[:end])
        for pattern in IGNORED:
            if fnmatch.fnmatch(prefix, pattern) or (
                "/" not in pattern and fnmatch.fnmatch(parts[end - 1], pattern)
            ):
                return True
    return False


def roots(base: Path = PROJECT_ROOT) -> list[str]:
    """The names a reference relative to `base` starts with: its (not generated) entries."""
    names = [
        path.name
        for path in base.iterdir()
        if path.name != ".git" and not is_ignored(path.relative_to(PROJECT_ROOT).as_posix())
    ]
    return sorted(names, key=len, reverse=True)


def reference_pattern(first: list[str]) -> re.Pattern:
    """A path that starts with one of `first` and goes on with at least one more component (or a slash)."""
    alternatives = "|".join(re.escape(name) for name in first)
    return re.compile(rf"(?<![\w./~$-])((?:{alternatives})/[\w./-]*)")


NOT_PATHS = {"docs/s"}  # a rate (documents per second)


def references(text: str, base: Path = PROJECT_ROOT) -> list[str]:
    """The paths relative to `base` that `text` names."""
    found = []
    for match in reference_pattern(roots(base)).finditer(text):
        reference = match.group(1).rstrip(".,;:")
        # templates (<name>, {x}, *.sql, …) name no single file
        following = text[match.end() : match.end() + 1]
        if (following and following in "<{*…[") or reference in NOT_PATHS:
            continue
        found.append(reference)
    return found


def python_prose(path: Path) -> str:
    """The comments and docstrings of a Python file (not its code: test data may name made-up paths)."""
    source = path.read_text()
    parts = [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                parts.append(docstring)
    return "\n".join(parts)


def documents() -> list[tuple[str, str]]:
    """(file, text to scan) for every file whose prose may name repository paths."""
    out = []

    def add(path: Path, text: str) -> None:
        out.append((str(path.relative_to(PROJECT_ROOT)), text))

    for path in [
        PROJECT_ROOT / "README.md",
        PROJECT_ROOT / "Makefile",
        *sorted(PROJECT_ROOT.glob("docs/*.md")),
    ]:
        add(path, path.read_text())
    for path in sorted(PROJECT_ROOT.rglob("*.py")):
        relative = path.relative_to(PROJECT_ROOT).as_posix()
        if not is_ignored(relative) and not relative.startswith((".git/", ".venv")):
            add(path, python_prose(path))
    for pattern in ("dbt_project/**/*.sql", "dbt_project/**/*.yml", "dbt_project/**/*.md", "sql/*.sql"):
        for path in sorted(PROJECT_ROOT.glob(pattern)):
            if not is_ignored(path.relative_to(PROJECT_ROOT).as_posix()):
                add(path, path.read_text())
    return out


def test_every_referenced_repository_path_exists() -> None:
    missing = []
    for name, text in documents():
        # the dbt project's files also name paths relative to dbt_project/ (macros/…, models/…)
        bases = [PROJECT_ROOT, DBT_PROJECT_DIR] if name.startswith("dbt_project/") else [PROJECT_ROOT]
        for reference in {reference for base in bases for reference in references(text, base)}:
            # a reference must name a file under one of the bases (either may hold e.g. a tests/ folder)
            if not any(
                is_ignored((base / reference).relative_to(PROJECT_ROOT).as_posix())
                or (base / reference).exists()
                for base in bases
            ):
                missing.append(f"{name}: {reference}")
    assert missing == [], "references to files that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "see [design](docs/design.md#3-relations) and `warehouse/api.py`.",
            ["docs/design.md", "warehouse/api.py"],
        ),
        ("written to out/bench/spark.json (generated)", []),
        ("1,092 vs 800 docs/s", []),
        ("one module per format, extract/formats/<name>.py", []),
        ("models/marts/*/*.sql and .venv/bin/python", []),
        ("the ../shared/data folder", []),
    ],
)
def test_references_are_found_in_prose(text: str, expected: list[str]) -> None:
    assert references(text) == expected


def test_generated_paths_are_ignored() -> None:
    assert is_ignored("out/bench/spark.json") and is_ignored("dbt_project/target/manifest.json")
    assert not is_ignored("docs/design.md")
