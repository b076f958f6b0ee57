"""The benchmark item (the row evaluation.registry describes) and the helpers every benchmark reader
shares: strict line reading, header and label checks, text items built from triples."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd

from deppath.paths import is_reversed
from files.reading import read_lines
from warehouse.errors import InputError

ITEM_COLUMNS = [
    "item_id",
    "dataset",
    "split",
    "line_number",
    "premise_path",
    "hypothesis_path",
    "premise_type_a",
    "premise_type_b",
    "hypothesis_type_a",
    "hypothesis_type_b",
    "is_premise_reversed",
    "is_hypothesis_reversed",
    "premise_text",
    "hypothesis_text",
    "premise_middle",
    "hypothesis_middle",
    "label",
    "extra",
]

# an argument slot of a SherLIiC template or release column: `person[A]`
TYPED_ARGUMENT = re.compile(r"(\S+)\[([AB])\]")


def benchmark_lines(path: Path) -> Iterable[tuple[int, str]]:
    """Lines of a benchmark file (the corpus readers' strict reading: UTF-8, BOM tolerated, no NUL)."""
    return read_lines(path)


def check_header(path: Path, lines: Iterator[tuple[int, str]], expected: list[str]) -> None:
    """Consume the header line of a TSV; a missing or different header is an InputError."""
    try:
        _, header = next(lines)
    except StopIteration:
        raise InputError(str(path), None, "file is empty") from None
    columns = header.split("\t")
    if columns != expected:
        raise InputError(str(path), 1, f"unexpected header {columns}; expected {expected}")


def split_from_name(path: Path) -> str:
    """train/dev/test from a file name such as `dev.csv`, `sherliic_test.csv`; else the stem."""
    for split in ("train", "dev", "test"):
        if re.search(rf"(^|[^a-z]){split}([^a-z]|$)", path.stem.lower()):
            return split
    return path.stem


def parse_label(value: str, path: Path, line: int) -> bool:
    """A gold label (yes/no, True/False, 1/0); anything else is an InputError."""
    v = value.strip().lower()
    if v in ("yes", "true", "1"):
        return True
    if v in ("no", "false", "0"):
        return False
    raise InputError(str(path), line, f"label {value!r} is not yes/no/True/False")


def parse_flag(value: str, path: Path, line: int, column: str) -> bool:
    """A `True`/`False` column; anything else is an InputError."""
    if value not in ("True", "False"):
        raise InputError(str(path), line, f"column {column}: expected True or False, got {value!r}")
    return value == "True"


def make_item(**kw) -> dict:
    """An item dict (every ITEM_COLUMNS key); a missing reversal flag is read off its path."""
    row = dict.fromkeys(ITEM_COLUMNS)
    row.update(kw)
    for side in ("premise", "hypothesis"):
        p = row[f"{side}_path"]
        if isinstance(p, str) and p:
            row[f"is_{side}_reversed"] = (
                is_reversed(p) if row[f"is_{side}_reversed"] is None else row[f"is_{side}_reversed"]
            )
        else:
            row[f"{side}_path"] = None
    row["extra"] = row["extra"] or {}
    return row


def parse_triple(text: str, path: Path, line: int) -> tuple[str, str, str]:
    """`subject,predicate,object` -> its three parts; anything else is an InputError."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3 or not all(parts):
        raise InputError(str(path), line, f"triple {text!r} is not `subject,predicate,object`")
    return parts[0], parts[1], parts[2]


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def triple_pair_item(prem: tuple[str, str, str], hypo: tuple[str, str, str], **kw) -> dict:
    """A text item: premise/hypothesis triples; A = the premise's first argument. `_parse` adds paths."""
    a, b = prem[0], prem[2]
    # the hypothesis' arguments in A/B order (Levy/Holt sometimes swaps them)
    swapped = _norm(hypo[0]) == _norm(b) and _norm(hypo[2]) == _norm(a) and _norm(a) != _norm(b)
    return make_item(
        premise_text=f"{prem[0]} {prem[1]} {prem[2]}",
        hypothesis_text=f"{hypo[0]} {hypo[1]} {hypo[2]}",
        premise_middle=prem[1],
        hypothesis_middle=hypo[1],
        extra={
            "_parse": {
                "premise": [prem[0], prem[1], prem[2], False],
                "hypothesis": [hypo[0], hypo[1], hypo[2], swapped],
            },
            **kw.pop("extra", {}),
        },
        **kw,
    )


def items_frame(items: list[dict]) -> pd.DataFrame:
    """Item dicts -> the registry's DataFrame (object columns; reversal flags as bool, None -> False)."""
    df = pd.DataFrame(items, columns=ITEM_COLUMNS)
    for col in ("is_premise_reversed", "is_hypothesis_reversed"):
        df[col] = df[col].map(lambda v: bool(v) if v is not None and v == v else False).astype(bool)
    df["label"] = df["label"].astype(bool)
    df = df.reset_index(drop=True)
    return df
