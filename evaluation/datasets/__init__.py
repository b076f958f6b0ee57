"""Benchmarks into the warehouse: readers for SherLIiC, Levy/Holt and Zeichner, the loader into
raw.benchmark_items (warehouse/schema/002_benchmarks.sql) and `load_items`, which returns the items
DataFrame that evaluation.registry describes.

Formats (`fmt`):
  sherliic_csv   the original SherLIiC release dev/test CSV (22 columns, docs/design.md §5); paths come
                 from the release's relation_index.tsv (`rel_id<TAB>path`, pass `relation_index=`)
  sherliic_tsv   the shared, assembled SherLIiC-dev TSV (typed paths, templates, sentences, lm_split)
  levy_holt      Teddy-Li triples `hypothesis<TAB>premise<TAB>True|False<TAB>lang`, triple = `subj,pred,obj`
                 (the folder name of a directional subset becomes the dataset `levy_holt/<folder>`)
  levy_holt_hosseini  Hosseini et al.'s `q<TAB>p<TAB>True|False` (p entails q), triples `arg1,pred,arg2`
  zeichner       Zeichner et al. (2012) `rule_lhs rule_rhs lhs rhs judgment confidence` (with header)

Items given as text (Levy/Holt triples, Zeichner sentences) are parsed with the project's extractor
(deppath.parsing / deppath.paths): the sentence "Griseofulvin kills infections" with the two argument strings
as mentions gives the path from argument A (the premise's first argument) to argument B, i.e. a
SherLIiC-orientation path; `deppath.paths.canonical_path` maps it to a warehouse relation.

Modules: items (the item row and the readers' shared helpers), sherliic, levy_holt, zeichner (one
benchmark family each), parsing (paths of text items), reading (any format), loading (the warehouse).
"""

from __future__ import annotations

from evaluation.datasets.items import ITEM_COLUMNS, items_frame
from evaluation.datasets.levy_holt import LEVY_HOLT_SUBSETS, read_levy_holt, read_levy_holt_hosseini
from evaluation.datasets.loading import (
    BenchmarkSummary,
    load_benchmark,
    load_items,
    shared_benchmark_files,
    warehouse_coverage,
)
from evaluation.datasets.parsing import parse_text_items
from evaluation.datasets.reading import FORMATS, read_benchmark
from evaluation.datasets.sherliic import (
    SHERLIIC_CSV_COLUMNS,
    SHERLIIC_TEXT_COLUMNS,
    SHERLIIC_TSV_COLUMNS,
    read_relation_index,
    read_sherliic_csv,
    read_sherliic_tsv,
    sherliic_splits,
)
from evaluation.datasets.zeichner import read_zeichner

__all__ = [
    "BenchmarkSummary",
    "FORMATS",
    "ITEM_COLUMNS",
    "LEVY_HOLT_SUBSETS",
    "SHERLIIC_CSV_COLUMNS",
    "SHERLIIC_TEXT_COLUMNS",
    "SHERLIIC_TSV_COLUMNS",
    "items_frame",
    "sherliic_splits",
    "load_benchmark",
    "load_items",
    "parse_text_items",
    "read_benchmark",
    "read_levy_holt",
    "read_levy_holt_hosseini",
    "read_relation_index",
    "read_sherliic_csv",
    "read_sherliic_tsv",
    "read_zeichner",
    "shared_benchmark_files",
    "warehouse_coverage",
]
