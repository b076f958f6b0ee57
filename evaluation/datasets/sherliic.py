"""SherLIiC (Schmitt & Schütze 2019): the original release's dev/test CSV (`sherliic_csv`, paths from its
relation_index.tsv) and the shared, assembled SherLIiC-dev TSV (`sherliic_tsv`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evaluation.datasets.items import (
    TYPED_ARGUMENT,
    benchmark_lines,
    check_header,
    items_frame,
    make_item,
    parse_flag,
    parse_label,
    split_from_name,
)
from files.reading import csv_rows
from files.spreadsheet import spreadsheet_unsafe
from warehouse.errors import InputError

SHERLIIC_CSV_COLUMNS = [
    "id",
    "prem_type",
    "prem_rel",
    "hypo_type",
    "hypo_rel",
    "prem_argleft",
    "prem_middle",
    "prem_argright",
    "prem_end",
    "hypo_argleft",
    "hypo_middle",
    "hypo_argright",
    "hypo_end",
    "is_prem_reversed",
    "is_hypo_reversed",
    "examples_A",
    "examples_B",
    "gold_label",
    "rel_score",
    "sign_score",
    "esr_score",
    "num_disagr",
]
# Text columns of the release CSV: written spreadsheet-safe by annotation.dataset (a leading apostrophe
# before = + - @), which the reader undoes.
SHERLIIC_TEXT_COLUMNS = [
    *(f"{side}_{part}" for side in ("prem", "hypo") for part in ("argleft", "middle", "argright", "end"))
]
SHERLIIC_TSV_COLUMNS = [
    "id",
    "premise_path",
    "hypothesis_path",
    "premise_tsg_index",
    "hypothesis_tsg_index",
    "premise_template",
    "hypothesis_template",
    "premise_sentence",
    "hypothesis_sentence",
    "label",
    "lm_split",
    "match_confidence",
    "template_source",
]


def template_types(template: str) -> tuple[str | None, str | None, str | None]:
    """(type of A, type of B, middle words) of a SherLIiC template `region[A] is trading with location[B]`."""
    if not template:
        return None, None, None
    types = {arg: t for t, arg in TYPED_ARGUMENT.findall(template)}
    middle = " ".join(TYPED_ARGUMENT.sub(" ", template).split()) or None
    return types.get("A"), types.get("B"), middle


def read_sherliic_tsv(path: Path, dataset: str = "sherliic", split: str = "dev") -> list[dict]:
    """The shared SherLIiC-dev TSV: typed paths, templates (types from `type[A]`), sentences, labels."""
    items = []
    lines = iter(benchmark_lines(path))
    check_header(path, lines, SHERLIIC_TSV_COLUMNS)
    for number, line in lines:
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != len(SHERLIIC_TSV_COLUMNS):
            raise InputError(
                str(path),
                number,
                f"expected {len(SHERLIIC_TSV_COLUMNS)} tab-separated columns, got {len(parts)}",
            )
        r = dict(zip(SHERLIIC_TSV_COLUMNS, parts, strict=True))
        pa, pb, pm = template_types(r["premise_template"])
        ha, hb, hm = template_types(r["hypothesis_template"])
        items.append(
            make_item(
                item_id=r["id"],
                dataset=dataset,
                split=split,
                line_number=number,
                premise_path=r["premise_path"],
                hypothesis_path=r["hypothesis_path"],
                premise_type_a=pa,
                premise_type_b=pb,
                hypothesis_type_a=ha,
                hypothesis_type_b=hb,
                premise_text=r["premise_sentence"],
                hypothesis_text=r["hypothesis_sentence"],
                premise_middle=pm,
                hypothesis_middle=hm,
                label=parse_label(r["label"], path, number),
                extra={
                    k: r[k]
                    for k in (
                        "lm_split",
                        "match_confidence",
                        "template_source",
                        "premise_tsg_index",
                        "hypothesis_tsg_index",
                        "premise_template",
                        "hypothesis_template",
                    )
                },
            )
        )
    return items


def read_relation_index(path: Path) -> dict[str, str]:
    """The release's relation_index.tsv: `rel_id<TAB>path`."""
    index = {}
    for number, line in benchmark_lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise InputError(str(path), number, "expected `rel_id<TAB>path`")
        index[parts[0].strip()] = parts[1].strip()
    return index


def argument_types(left: str, right: str) -> tuple[str | None, str | None]:
    """Types of A and B from the `type[A]` / `type[B]` argument columns of the release CSV."""
    found = {}
    for value in (left, right):
        m = TYPED_ARGUMENT.fullmatch(value.strip())
        if m:
            found[m.group(2)] = m.group(1)
    return found.get("A"), found.get("B")


def read_sherliic_csv(
    path: Path, relation_index: Path | None = None, dataset: str = "sherliic", split: str | None = None
) -> list[dict]:
    """The original 22-column SherLIiC dev/test CSV (with header)."""
    split = split or split_from_name(path)
    index = read_relation_index(relation_index) if relation_index else {}
    items = []
    rows = csv_rows(path)
    _, header = next(rows, (None, None))
    if header is None:
        raise InputError(str(path), None, "file is empty")
    if header != SHERLIIC_CSV_COLUMNS:
        raise InputError(str(path), 1, f"unexpected header {header}; expected the 22 release columns")
    for number, row in rows:
        if not row:
            continue
        if len(row) != 22:
            raise InputError(str(path), number, f"expected 22 comma-separated columns, got {len(row)}")
        r = dict(zip(SHERLIIC_CSV_COLUMNS, row, strict=True))
        for column in SHERLIIC_TEXT_COLUMNS:
            r[column] = spreadsheet_unsafe(r[column])
        pa, pb = argument_types(r["prem_argleft"], r["prem_argright"])
        ha, hb = argument_types(r["hypo_argleft"], r["hypo_argright"])
        prem_text = " ".join(
            r[c] for c in ("prem_argleft", "prem_middle", "prem_argright", "prem_end") if r[c]
        )
        hypo_text = " ".join(
            r[c] for c in ("hypo_argleft", "hypo_middle", "hypo_argright", "hypo_end") if r[c]
        )
        items.append(
            make_item(
                item_id=r["id"],
                dataset=dataset,
                split=split,
                line_number=number,
                premise_path=index.get(r["prem_rel"]),
                hypothesis_path=index.get(r["hypo_rel"]),
                premise_type_a=pa,
                premise_type_b=pb,
                hypothesis_type_a=ha,
                hypothesis_type_b=hb,
                is_premise_reversed=parse_flag(r["is_prem_reversed"], path, number, "is_prem_reversed"),
                is_hypothesis_reversed=parse_flag(r["is_hypo_reversed"], path, number, "is_hypo_reversed"),
                premise_text=prem_text,
                hypothesis_text=hypo_text,
                premise_middle=r["prem_middle"],
                hypothesis_middle=r["hypo_middle"],
                label=parse_label(r["gold_label"], path, number),
                extra={
                    k: r[k]
                    for k in (
                        "prem_type",
                        "prem_rel",
                        "hypo_type",
                        "hypo_rel",
                        "examples_A",
                        "examples_B",
                        "rel_score",
                        "sign_score",
                        "esr_score",
                        "num_disagr",
                    )
                },
            )
        )
    return items


def sherliic_splits(shared: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """SherLIiC-dev split by lm_split (Schmitt & Schütze 2021): (train, dev)."""
    items = items_frame(read_sherliic_tsv(shared / "sherliic" / "dev.tsv"))
    lm_split = items["extra"].map(lambda e: e.get("lm_split") if isinstance(e, dict) else None)
    return items[lm_split == "train"].reset_index(drop=True), items[lm_split == "dev"].reset_index(drop=True)
