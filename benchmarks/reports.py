"""What every benchmark writes: its figures as JSON (for scripts) and as Markdown (for people), side by
side in its output folder, and the units its tables use."""

from __future__ import annotations

import json
from pathlib import Path


def write_report(out: Path, name: str, figures: dict, markdown: str) -> tuple[Path, Path]:
    """`out`/NAME.json (the figures; values JSON cannot hold written as text) and `out`/NAME.md."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / f"{name}.json", out / f"{name}.md"
    json_path.write_text(json.dumps(figures, indent=2, default=str) + "\n", encoding="utf-8")
    md_path.write_text(markdown, encoding="utf-8")
    return json_path, md_path


def gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB"
