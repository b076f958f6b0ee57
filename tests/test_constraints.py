"""constraints.txt pins a version of every dependency pyproject.toml declares (default install and every
extra), inside the declared range: a pyproject edit without `make constraints` fails here."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from warehouse.settings import PROJECT_ROOT


def pins() -> dict[str, Version]:
    out = {}
    for line in (PROJECT_ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            out[canonicalize_name(name)] = Version(version)
    return out


def test_every_declared_dependency_is_pinned_within_its_range() -> None:
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]
    declared = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    pinned = pins()
    problems = []
    for requirement in map(Requirement, declared):
        version = pinned.get(canonicalize_name(requirement.name))
        if version is None:
            problems.append(f"{requirement.name}: not in constraints.txt")
        elif not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"{requirement.name}: pinned {version}, pyproject wants {requirement.specifier}")
    assert problems == [], "run `make constraints`: " + "; ".join(problems)


def test_the_project_itself_is_not_pinned() -> None:
    assert "sherliic-warehouse" not in pins()
