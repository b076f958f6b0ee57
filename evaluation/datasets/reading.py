"""One benchmark file of any format into item dicts (ITEM_COLUMNS)."""

from __future__ import annotations

from pathlib import Path

from evaluation.datasets.levy_holt import read_levy_holt, read_levy_holt_hosseini
from evaluation.datasets.parsing import parse_text_items
from evaluation.datasets.sherliic import read_sherliic_csv, read_sherliic_tsv
from evaluation.datasets.zeichner import read_zeichner
from files.reading import check_id, check_input_file
from warehouse.errors import InputError

FORMATS = ("sherliic_csv", "sherliic_tsv", "levy_holt", "levy_holt_hosseini", "zeichner")


def read_benchmark(
    path: str | Path,
    fmt: str,
    *,
    dataset: str | None = None,
    split: str | None = None,
    relation_index: str | Path | None = None,
    show_progress: bool = True,
) -> list[dict]:
    """Read one benchmark file into item dicts (ITEM_COLUMNS), parsing text items with spaCy."""
    path = Path(path)
    if fmt not in FORMATS:
        raise ValueError(f"unknown benchmark format {fmt!r}; known: {', '.join(FORMATS)}")
    check_input_file(path)
    if relation_index:
        check_input_file(relation_index)
    kw = {k: v for k, v in (("dataset", dataset), ("split", split)) if v is not None}
    if fmt == "sherliic_tsv":
        items = read_sherliic_tsv(path, **kw)
    elif fmt == "sherliic_csv":
        items = read_sherliic_csv(path, Path(relation_index) if relation_index else None, **kw)
    elif fmt == "levy_holt":
        items = read_levy_holt(path, **kw)
    elif fmt == "levy_holt_hosseini":
        items = read_levy_holt_hosseini(path, **kw)
    else:
        items = read_zeichner(path, **kw)
    for it in items:
        for field in ("item_id", "dataset", "split"):
            check_id(it[field], field.replace("_", " "), path, it["line_number"])
    ids = [it["item_id"] for it in items]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InputError(str(path), None, f"duplicate item id {dup!r}")
    parse_text_items(items, show_progress=show_progress)
    return items
