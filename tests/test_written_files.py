"""Files the commands write (issue 21): an export replaces the previous one whole or not at all (a full disk
half-way, `ulimit -f`, leaves it untouched) and never writes through a symbolic link; an annotation batch
name is a plain name, so its CSV cannot land outside out/annotation. On the planted graph of
tests/test_dbt_build.py, built once for the module."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotation.sampling import check_batch_name, export_batch_csv, sample_batch
from release.export import STAGING_PREFIX, export
from tests.test_dbt_build import build, load_raw_graph, planted_graph
from warehouse.target import Target

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def built(make_target, tmp_path_factory) -> Iterator[Target]:
    target = make_target()
    load_raw_graph(target.url(), planted_graph())
    build(target.url(), tmp_path_factory.mktemp("dbt"))
    yield target


def folder(path: Path) -> dict[str, bytes]:
    """Every entry of `path` (name -> bytes; a symbolic link as 'link -> target')."""
    return {
        entry.name: f"link -> {os.readlink(entry)}".encode() if entry.is_symlink() else entry.read_bytes()
        for entry in sorted(path.iterdir())
    }


def cli(name: str, *args: str, file_size_limit: int | None = None, **env: str) -> subprocess.CompletedProcess:
    def limit() -> None:  # `ulimit -f`: writing past it fails with EFBIG (Python ignores SIGXFSZ)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run(
        [str(BIN / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
        preexec_fn=limit if file_size_limit is not None else None,
    )


def test_a_full_disk_half_way_leaves_the_previous_export_whole(built: Target, tmp_path: Path) -> None:
    out = tmp_path / "export"
    export(built, out)
    before = folder(out)
    assert {"teg.tsv", "teg-untyped.tsv", "entity_index.tsv", "rules.tsv", "manifest.json"} <= set(before)
    with built.connect() as conn:  # another build: every file changes
        conn.execute("update warehouse.teg_edges set n_instances = n_instances + 1")
        conn.execute("update warehouse.entities set entity_name = entity_name || ' (renamed)'")
    limit = len(before["teg.tsv"]) // 2  # the first file stops half-way
    failed = cli("sherliic-export", "--database-url", built.url(), "--out", str(out), file_size_limit=limit)
    assert failed.returncode == 2 and "Traceback" not in failed.stderr, failed.stderr[-2000:]
    assert failed.stderr.strip().splitlines()[-1] == (
        f"error: {out}: File too large while writing the export; nothing changed in this folder"
    )
    assert folder(out) == before, "a failed export changed the previous one"
    done = cli("sherliic-export", "--database-url", built.url(), "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    after = folder(out)
    assert set(after) == set(before) and all(
        after[name] != before[name] for name in ("teg.tsv", "entity_index.tsv")
    )
    assert b"(renamed)" in after["entity_index.tsv"]


def test_an_export_never_writes_through_a_symbolic_link(built: Target, tmp_path: Path) -> None:
    out, victim = tmp_path / "export", tmp_path / "elsewhere.txt"
    out.mkdir()
    victim.write_text("not the export's\n")
    (out / "teg.tsv").symlink_to(victim)
    (out / "unrelated.txt").write_text("a file of the user's\n")
    summary = export(built, out)
    assert victim.read_text() == "not the export's\n"
    assert (
        not (out / "teg.tsv").is_symlink()
        and len((out / "teg.tsv").read_text().splitlines()) == summary.rows["teg.tsv"]
    )
    assert (out / "unrelated.txt").read_text() == "a file of the user's\n"
    assert not [entry for entry in out.iterdir() if entry.name.startswith(STAGING_PREFIX)]


def test_a_failed_export_leaves_no_temporary_folder(fresh_target: Target, tmp_path: Path) -> None:
    out = tmp_path / "export"
    with pytest.raises(RuntimeError, match="marts missing"):
        export(fresh_target, out)
    assert list(out.iterdir()) == []


BAD_BATCH_NAMES = [
    "../../escape",
    "{tmp}/abs",
    "a/b",
    "",
    "two\nlines",
    ".hidden",
    "x" * 101,
    "name with space",
]


@pytest.mark.parametrize("name", BAD_BATCH_NAMES)
def test_a_batch_name_is_a_plain_name(built: Target, tmp_path: Path, name: str) -> None:
    name = name.replace("{tmp}", str(tmp_path))
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    result = subprocess.run(
        [
            str(BIN / "sherliic-annotate"),
            "sample",
            "--batch",
            name,
            "--premises",
            "2",
            "--database-url",
            built.url(),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SHERLIIC_OUT": str(out)},
        cwd=work,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines() == [
        f"error: batch name {name!r}: use letters, digits, '-', '_' and '.', starting with a letter or digit "
        "(at most 100 characters)"
    ]
    written = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*") if path.is_file())
    assert written == [], f"files written for batch name {name!r}"
    with built.connect() as conn:
        assert conn.execute(
            "select count(*) from raw.annotation_batches where batch_name = %s", (name,)
        ).fetchone() == (0,)


def test_plain_batch_names_work_and_the_library_checks_them_too(built: Target, tmp_path: Path) -> None:
    assert check_batch_name("round-2_v1.0") == "round-2_v1.0"
    result = subprocess.run(
        [
            str(BIN / "sherliic-annotate"),
            "sample",
            "--batch",
            "round-2_v1.0",
            "--premises",
            "1",
            "--database-url",
            built.url(),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SHERLIIC_OUT": str(tmp_path / "out")},
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "annotation" / "round-2_v1.0.csv").is_file()
    for bad in ("../x", "/tmp/x"):
        with pytest.raises(ValueError, match="batch name"):
            sample_batch(built, bad, 1)
        with pytest.raises(ValueError, match="batch name"):
            export_batch_csv(built, bad, tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists()
