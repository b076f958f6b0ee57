"""Benchmarks into the warehouse: a benchmark file as one batch of raw.benchmark_items (through the one
batch store, extract.batches.store), the items DataFrame back (`load_items`), and their coverage by the
warehouse's relations."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from deppath.paths import canonical_path
from evaluation.datasets.items import ITEM_COLUMNS, items_frame
from evaluation.datasets.reading import FORMATS, read_benchmark
from extract.batches.store import (
    BatchClaim,
    PostgresBatchStore,
    PostgresBatchWriter,
    file_checksum,
    open_batch_store,
)
from files.reading import check_input_file
from warehouse.errors import InputError
from warehouse.target import Marts, Target, marts_of


@dataclass
class BenchmarkSummary:
    """What one benchmark load did (`skipped`: the same file was already loaded)."""

    source_file: str
    fmt: str
    dataset: str
    split: str
    n_items: int
    n_mapped: int  # items with both paths
    batch_id: int | None
    skipped: bool  # already loaded (same checksum) and not replaced


def load_benchmark(
    target: Target,
    path: str | Path,
    fmt: str,
    *,
    dataset: str | None = None,
    split: str | None = None,
    relation_index: str | Path | None = None,
    replace: bool = False,
    show_progress: bool = True,
) -> BenchmarkSummary:
    """Load one benchmark file into raw.benchmark_items (on the Target's Postgres side, either engine) as
    one batch of the batch store (extract.batches.store): transactional, idempotent, a `failed` row on
    bad input.

    A file already loaded (same bytes, format, dataset, split and relation index) is skipped unless
    `replace`. Each (dataset, split, item id) is loaded once: a file whose item ids are already loaded
    from another batch (another file, or an earlier version of this one) is refused, or with `replace`
    takes that batch's place, in the same transaction.
    """
    target = target.on_postgres()  # benchmark items live in Postgres on either engine
    path = check_input_file(path)
    if fmt not in FORMATS:
        raise ValueError(f"unknown benchmark format {fmt!r}; known: {', '.join(FORMATS)}")
    options = {
        "dataset": dataset,
        "split": split,
        "relation_index": str(relation_index) if relation_index else None,
    }
    rel_bytes = check_input_file(relation_index).read_bytes() if relation_index else b""
    checksum = file_checksum(path, json.dumps(options, sort_keys=True).encode() + rel_bytes)
    # by_path off: one file loads as several dataset/split batches; overlapping item ids are refused below
    claim = BatchClaim(path, fmt, "benchmark", checksum, options, replace=replace, by_path=False)
    loaded: list[dict] = []

    def write(writer: PostgresBatchWriter) -> dict[str, int]:  # the Postgres store: target.on_postgres()
        conn = writer.connection  # the batch's own transaction
        items = read_benchmark(
            path,
            fmt,
            dataset=dataset,
            split=split,
            relation_index=relation_index,
            show_progress=show_progress,
        )
        if not items:
            raise InputError(str(path), None, "no benchmark items in the file")
        for key in sorted({(it["dataset"], it["split"]) for it in items}):
            # Loads of different files into the same dataset/split wait for each other (item ids).
            conn.execute(
                "select pg_advisory_xact_lock(hashtext(%s))", ("sherliic-benchmark:" + "/".join(key),)
            )
        writer.write_rows(
            "benchmark_items",
            ITEM_COLUMNS,
            (tuple(json.dumps(it[c]) if c == "extra" else it[c] for c in ITEM_COLUMNS) for it in items),
        )
        overlapping = conn.execute(
            "select old.batch_id, min(b.source_file), min(old.dataset || '/' || old.split), "
            "min(old.item_id), count(*) "
            "from raw.benchmark_items new "
            "join raw.benchmark_items old using (dataset, split, item_id) "
            "join raw.load_batches b on b.batch_id = old.batch_id and b.status = 'loaded' "
            "where new.batch_id = %s and old.batch_id <> new.batch_id group by old.batch_id",
            (writer.batch_id,),
        ).fetchall()
        if overlapping and not replace:
            old, source, where, example, n = overlapping[0]
            raise InputError(
                str(path),
                None,
                f"{n} item id(s) of {where} (e.g. {example!r}) are already loaded from {source} (batch "
                f"{old}); nothing loaded — use --replace to load this file in its place, or another "
                "--dataset/--split",
            )
        if overlapping:  # this file takes their place, in the same transaction
            PostgresBatchStore.delete(conn, [row[0] for row in overlapping])
        loaded.extend(items)
        mapped = sum(1 for it in items if it["premise_path"] and it["hypothesis_path"])
        return {"rows": len(items), "mapped": mapped}

    with open_batch_store(target) as store:
        summary = store.load(claim, write)
    if summary.skipped:
        with target.connect() as conn:
            n, mapped, ds, sp = conn.execute(
                "select count(*),"
                " count(*) filter (where premise_path is not null and hypothesis_path is not null),"
                " min(dataset), min(split) from raw.benchmark_items where batch_id = %s",
                (summary.batch_id,),
            ).fetchone()
        return BenchmarkSummary(str(path), fmt, ds or "", sp or "", n, mapped, summary.batch_id, True)
    ds, sp = loaded[0]["dataset"], loaded[0]["split"]
    n_mapped = summary.counts["mapped"]
    return BenchmarkSummary(str(path), fmt, ds, sp, len(loaded), n_mapped, summary.batch_id, False)


def load_items(target: Target, datasets: Iterable[str] | None = None) -> pd.DataFrame:
    """The items DataFrame of evaluation.registry from every loaded benchmark batch (optionally filtered),
    read from the Target's Postgres side (either engine)."""
    # One row per (dataset, split, item id), the latest batch's, even in a database loaded before the
    # loader refused overlapping files: an item counted twice would count twice in every metric.
    query = (
        f"select {', '.join(ITEM_COLUMNS)} from ("
        f"select distinct on (i.dataset, i.split, i.item_id) i.batch_id, "
        f"{', '.join('i.' + c for c in ITEM_COLUMNS)} from raw.benchmark_items i "
        "join raw.load_batches b using (batch_id) where b.status = 'loaded'"
    )
    params: list = []
    if datasets is not None:
        query += " and i.dataset = any(%s)"
        params.append(list(datasets))
    query += " order by i.dataset, i.split, i.item_id, i.batch_id desc) as items"
    query += " order by dataset, split, batch_id, line_number"
    with target.on_postgres().connect() as conn:
        rows = conn.execute(query, params).fetchall()
    return items_frame([dict(zip(ITEM_COLUMNS, r, strict=True)) for r in rows])


def warehouse_coverage(items: pd.DataFrame, warehouse: Target | Marts) -> pd.DataFrame:
    """Per dataset/split: items whose two paths map (canonical_path) to relations of the build's
    relations mart (read from the marts of a Target, or from open marts of either engine).

    Returns columns dataset, split, n_items, n_with_paths, n_in_warehouse (n_in_warehouse is None when the
    warehouse has not been built).
    """
    with marts_of(warehouse) as marts:
        exists = marts.has_table(marts.schema, "relations")
        known = {r[0] for r in marts.stream(f"select path from {marts.schema}.relations")} if exists else None
    rows = []
    for (ds, sp), g in items.groupby(["dataset", "split"], sort=True):
        with_paths = g["premise_path"].notna() & g["hypothesis_path"].notna()
        in_wh = None
        if known is not None:
            in_wh = int(
                sum(
                    canonical_path(p)[0] in known and canonical_path(h)[0] in known
                    for p, h in zip(
                        g.loc[with_paths, "premise_path"], g.loc[with_paths, "hypothesis_path"], strict=True
                    )
                )
            )
        rows.append(
            {
                "dataset": ds,
                "split": sp,
                "n_items": len(g),
                "n_with_paths": int(with_paths.sum()),
                "n_in_warehouse": in_wh,
            }
        )
    return pd.DataFrame(rows)


def shared_benchmark_files(shared: Path) -> list[tuple[Path, str]]:
    """The benchmark files of the shared data folder that `sherliic-baselines all` loads."""
    files: list[tuple[Path, str]] = [(shared / "sherliic" / "dev.tsv", "sherliic_tsv")]
    lh = shared / "levy_holt" / "teddy_li"
    for folder in sorted(p for p in lh.glob("*") if p.is_dir()):
        for name in ("train.txt", "dev.txt"):
            if (folder / name).is_file():
                files.append((folder / name, "levy_holt"))
    for name in ("zeichner_entailingAnnotations.txt", "zeichner_nonEntailingAnnotations.txt"):
        files.append((shared / "zeichner" / name, "zeichner"))
    return [(p, f) for p, f in files if p.is_file()]
