"""Levy/Holt (Levy & Dagan 2016; Holt 2018): Teddy-Li's triples (`levy_holt`, with the directional
subsets of Li et al. 2022) and Hosseini et al.'s (`levy_holt_hosseini`)."""

from __future__ import annotations

from pathlib import Path

from evaluation.datasets.items import (
    benchmark_lines,
    parse_label,
    parse_triple,
    split_from_name,
    triple_pair_item,
)
from warehouse.errors import InputError

# Li et al. (2022): folder a_b holds the positives of subset a and the negatives of subset b.
LEVY_HOLT_SUBSETS = {
    "dirposi": "DirTrue",
    "dirnegi": "DirFalse",
    "symposi": "Paraphrases",
    "symnegi": "Unrelated",
}


def read_levy_holt(path: Path, dataset: str | None = None, split: str | None = None) -> list[dict]:
    """Teddy-Li Levy/Holt: `hypothesis<TAB>premise<TAB>True|False<TAB>lang` (hypothesis first)."""
    split = split or split_from_name(path)
    folder = path.parent.name
    if dataset is None:
        dataset = "levy_holt" if folder == "orig" else f"levy_holt/{folder}"
    pos, _, neg = folder.partition("_")
    items = []
    for number, line in benchmark_lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) not in (3, 4):
            raise InputError(
                str(path), number, f"expected hypothesis, premise, label[, lang]; got {len(parts)} columns"
            )
        hypo, prem = parse_triple(parts[0], path, number), parse_triple(parts[1], path, number)
        label = parse_label(parts[2], path, number)
        extra = {"lang": parts[3] if len(parts) == 4 else None}
        if pos in LEVY_HOLT_SUBSETS and neg in LEVY_HOLT_SUBSETS:
            extra["subset"] = LEVY_HOLT_SUBSETS[pos if label else neg]
        items.append(
            triple_pair_item(
                prem,
                hypo,
                item_id=f"{split}{number:05d}",
                dataset=dataset,
                split=split,
                line_number=number,
                label=label,
                extra=extra,
            )
        )
    return items


def read_levy_holt_hosseini(
    path: Path, dataset: str = "levy_holt_hosseini", split: str | None = None
) -> list[dict]:
    """Hosseini et al.: `q<TAB>p<TAB>True|False`, p entails q (the `_s` files have cased arguments)."""
    split = split or split_from_name(path)
    items = []
    for number, line in benchmark_lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise InputError(str(path), number, f"expected q, p, label; got {len(parts)} columns")
        hypo, prem = parse_triple(parts[0], path, number), parse_triple(parts[1], path, number)
        items.append(
            triple_pair_item(
                prem,
                hypo,
                item_id=f"{split}{number:05d}",
                dataset=dataset,
                split=split,
                line_number=number,
                label=parse_label(parts[2], path, number),
            )
        )
    return items
