"""The layout stays as docs/design.md §2 draws it (what `make lint` cannot check by itself):

- no function outside warehouse/ takes a database URL, and only warehouse/ opens connections or Spark
  sessions (everything else holds a Target);
- no `_private` name is imported from another package;
- no module over 600 lines;
- project imports at module top, except in command-line modules (`--help` stays fast) and of the modules
  that import an optional extra at their top (torch);
- nothing writes os.environ.

The import layers themselves are import-linter contracts in pyproject.toml (`make lint`).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from warehouse.settings import PROJECT_ROOT

# the project's packages: the rooms of the import contracts (pyproject.toml), and the examples
SOURCE_PACKAGES = tuple(
    tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
)
PACKAGES = (*SOURCE_PACKAGES, "examples")
MAX_LINES = 600
URL_PARAMETERS = {"url", "database_url", "db_url", "dsn"}
# calls that open a connection or a session: only warehouse/ makes them
OPENERS = {("psycopg", "connect"), ("SparkSession", "builder"), ("sqlalchemy", "create_engine")}
# project modules that import an optional extra at their top, so that others import them lazily
OPTIONAL_EXTRA_MODULES = {"lm.encoder", "lm.inference"}


def modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (PROJECT_ROOT / package).rglob("*.py"))


def package_of(path: Path) -> str:
    return path.relative_to(PROJECT_ROOT).parts[0]


def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(PROJECT_ROOT)}:{node.lineno}"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_module_is_short_enough(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PROJECT_ROOT)} has {lines} lines (at most {MAX_LINES})"


def test_no_url_parameters_or_connections_outside_warehouse() -> None:
    found = []
    for path in modules():
        if package_of(path) == "warehouse":
            continue
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                found += [
                    f"{where(path, node)} {node.name}({a.arg})" for a in arguments if a.arg in URL_PARAMETERS
                ]
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if (node.value.id, node.attr) in OPENERS:
                    found.append(f"{where(path, node)} {node.value.id}.{node.attr}")
    assert not found, "URL parameters or connections opened outside warehouse/:\n" + "\n".join(found)


def test_no_private_names_imported_across_packages() -> None:
    found = []
    for path in modules():
        for node in ast.walk(parsed(path)):
            if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
                continue
            source = node.module.split(".")[0]
            if source not in PACKAGES or source == package_of(path):
                continue
            private = [a.name for a in node.names if a.name.startswith("_")]
            private += [part for part in node.module.split(".") if part.startswith("_")]
            found += [f"{where(path, node)} {node.module}: {name}" for name in private]
    assert not found, "private names imported from another package:\n" + "\n".join(found)


def test_nothing_writes_the_environment() -> None:
    def writes(node: ast.AST) -> bool:
        target = node.value if isinstance(node, ast.Subscript) else node
        return isinstance(target, ast.Attribute) and target.attr == "environ"

    found = []
    for path in modules():
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
                targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
                found += [where(path, node) for t in targets if writes(t)]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                method = node.func
                if method.attr in {"setdefault", "update", "pop", "clear", "putenv"} and (
                    writes(method.value) or (isinstance(method.value, ast.Name) and method.value.id == "os")
                ):
                    found.append(where(path, node))
    assert not found, "os.environ written (pass env= to subprocesses instead):\n" + "\n".join(found)


def test_project_imports_at_module_top() -> None:
    def imported(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        return [f"{base}.{alias.name}" if base else alias.name for alias in node.names]

    found = []
    for path in modules():
        if path.name == "cli.py" or path == PROJECT_ROOT / "warehouse" / "__init__.py":
            continue  # command lines defer what --help does not need; the package face loads pandas lazily
        for function in ast.walk(parsed(path)):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom) and not getattr(node, "level", 0):
                    names = [n for n in imported(node) if n.split(".")[0] in PACKAGES]
                    found += [
                        f"{where(path, node)} {name}"
                        for name in names
                        if not any(name == m or name.startswith(m + ".") for m in OPTIONAL_EXTRA_MODULES)
                    ]
    assert not found, "project imports inside functions:\n" + "\n".join(found)


def test_readme_layout_names_what_exists() -> None:
    """Every package, folder and module README's Layout names exists (a module inside the package of its
    line), and every package of the import contracts is named there."""
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme.split("## Layout\n", 1)[1].split("```\n", 2)[1]
    package, named, missing = None, set(), []
    for line in layout.splitlines():
        head = line.split(" ", 1)[0]
        if head.endswith("/"):
            package = head.rstrip("/")
            named.add(package)
            if not (PROJECT_ROOT / package).is_dir():
                missing.append(head)
        for name in re.findall(r"(?<![\w./-])([a-z_]+(?:\.py|/))(?=[\s,)]|$)", line.split(" ", 1)[-1]):
            if not list((PROJECT_ROOT / package).rglob(name.rstrip("/"))):
                missing.append(f"{package}/{name}")
    assert not missing, f"README's Layout names what does not exist: {missing}"
    assert set(SOURCE_PACKAGES) <= named, (
        f"packages missing from README's Layout: {set(SOURCE_PACKAGES) - named}"
    )
