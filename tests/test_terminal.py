"""What the commands print to a terminal and to a log (warehouse/terminal.py): progress bars only on a
terminal, one plain line per step in a log, no bar left on the line of an error, tables never cut."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

from rich.console import Console
from rich.table import Table

from warehouse.target import Target
from warehouse.terminal import Progress, print_table

LONG_PATH = "nsubjpass^-___head___prep___by___pobj ⇒ nsubj^-___lead___dobj___company___prep___in___pobj"


def test_a_log_gets_one_plain_line_per_step_and_no_bar():
    log = io.StringIO()
    bar = Progress(["a", "b"], desc="baseline 1/2 Lemma", unit="baseline", file=log)
    assert list(bar) == ["a", "b"]
    bar.set_description("baseline 2/2 Always yes")
    bar.close()
    assert log.getvalue() == "baseline 1/2 Lemma\nbaseline 2/2 Always yes\n"
    quiet = io.StringIO()
    list(Progress(range(3), desc="file 1/1 x.jsonl", file=quiet, lines=False))
    assert quiet.getvalue() == ""


def test_a_terminal_gets_the_bar():
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal:
        bar = Progress(range(3), desc="file 1/1 x.jsonl", unit="doc", file=terminal)
        list(bar)
        bar.close()
    os.set_blocking(leader, False)
    chunks = []
    while True:  # a pseudo-terminal hands its buffer over in pieces
        try:
            chunk = os.read(leader, 65536)
        except (BlockingIOError, OSError):
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    written = b"".join(chunks).decode()
    assert "file 1/1 x.jsonl" in written and "\r" in written and "3/3" in written


def test_a_table_is_never_cut():
    table = Table(title="planted")
    table.add_column("file")
    table.add_column("rule")
    table.add_row("acq_jsonl_with_a_long_name_of_its_own.jsonl", LONG_PATH)
    log = io.StringIO()
    print_table(Console(file=log, width=80), table)  # a file: no terminal width to fit
    assert "acq_jsonl_with_a_long_name_of_its_own.jsonl" in log.getvalue() and LONG_PATH in log.getvalue()
    assert "…" not in log.getvalue()
    narrow = io.StringIO()
    terminal = Console(file=narrow, width=60, force_terminal=True, color_system=None)
    print_table(terminal, table)  # a narrow terminal: long cells folded onto more lines
    assert "…" not in narrow.getvalue() and max(map(len, narrow.getvalue().splitlines())) <= 60
    assert "in___pobj" in narrow.getvalue() and "of_its_own.jsonl" in narrow.getvalue()  # the ends too


def test_a_load_in_a_log_has_plain_lines_and_its_error_on_a_line_of_its_own(fresh_target: Target, tmp_path):
    good = tmp_path / "acquisitions_of_companies_in_the_year_2020.jsonl"
    good.write_text(
        json.dumps(
            {
                "id": "d1",
                "text": "Acme acquired Globex in 2020.",
                "mentions": [
                    {"start": 0, "end": 4, "entity": "acme"},
                    {"start": 14, "end": 20, "entity": "globex"},
                ],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "extract.cli", "--database-url", fresh_target.url(), "corpus"]
        + ["--format", "jsonl", str(good), str(bad)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2 and "\r" not in result.stderr
    assert result.stderr.splitlines() == [
        f"file 1/2 {good.name}",
        f"{good}: loaded as batch 1 (documents 1, sentences 1, mentions 2, entities 2, instances 1); reader: "
        "sentences_parsed 1",
        f"file 2/2 {bad.name}",
        f"error: {bad}:1: missing field 'text'",
        f"done before this error, kept (1): {good.name}",
    ]
    listing = subprocess.run(
        [sys.executable, "-m", "extract.cli", "--database-url", fresh_target.url(), "batches"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert good.name in listing.stdout and "…" not in listing.stdout  # the file column is not cut
