"""Aggregate judgements (dbt tag:annotation) and export the gold items as SherLIiC dev/test CSVs."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from psycopg.rows import dict_row

from builds.runner import run_dbt
from evaluation.datasets import SHERLIIC_CSV_COLUMNS, SHERLIIC_TEXT_COLUMNS
from files.spreadsheet import spreadsheet_safe
from warehouse.target import Target

# The 22 columns of SherLIiC's dev.csv / test.csv (docs/design.md §5), in order: one definition, shared with
# the benchmark loader that reads them.
SHERLIIC_COLUMNS = SHERLIIC_CSV_COLUMNS
_SOURCE_COLUMN = {"examples_A": "examples_a", "examples_B": "examples_b"}
# Text for people: spreadsheet-safe (files.spreadsheet.spreadsheet_safe; the benchmark reader undoes it).
TEXT_COLUMNS = SHERLIIC_TEXT_COLUMNS


def aggregate(target: Target, dbt_vars: dict | None = None, *, target_path: Path | None = None) -> None:
    """Rebuild and test the annotation marts (trust, gold labels, split, Table 2 statistics).

    target_path: a private dbt target folder (lets several dbt processes run side by side).
    """
    args = ["build", "--select", "tag:annotation"]
    if target_path is not None:
        args += ["--target-path", str(target_path / "target"), "--log-path", str(target_path / "logs")]
    run_dbt(target, args, dbt_vars)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)  # "True"/"False", as the original baseline code compares
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def export_dataset(target: Target, out_dir: Path, task: str = "sherliic") -> dict:
    """Write dev.csv and test.csv (22 columns, header row) from the annotation_sherliic_dataset mart."""
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    schema = target.marts_schema
    with target.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
        for split in ("dev", "test"):
            rows = cur.execute(
                f"select * from {schema}.annotation_sherliic_dataset "
                "where task = %s and split = %s order by id",
                (task, split),
            ).fetchall()
            with (out_dir / f"{split}.csv").open("w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle)
                writer.writerow(SHERLIIC_COLUMNS)
                for row in rows:
                    cells = {c: _cell(row[_SOURCE_COLUMN.get(c, c)]) for c in SHERLIIC_COLUMNS}
                    for c in TEXT_COLUMNS:
                        cells[c] = spreadsheet_safe(cells[c])
                    writer.writerow([cells[c] for c in SHERLIIC_COLUMNS])
            counts[split] = len(rows)
    return counts


def statistics(target: Target, task: str = "sherliic") -> list[dict]:
    """The Table 2 statistics (annotation_statistics mart) as rows of split, statistic, value."""
    with target.connect() as conn, conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            f"select split, statistic, value from {target.marts_schema}.annotation_statistics "
            "where task = %s order by split, statistic",
            (task,),
        ).fetchall()
