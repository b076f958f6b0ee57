"""Benchmarks into the warehouse: readers for SherLIiC, Levy/Holt and Zeichner, the loader into
raw.benchmark_items (warehouse/schema/002_benchmarks.sql) and `load_items`, which returns the items
DataFrame that baselines.registry describes.

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
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from deppath.paths import canonical_path, is_reversed
from extract.formats.common import check_id, check_input_file, csv_rows, read_lines
from warehouse import server
from warehouse.errors import InputError
from warehouse.export import spreadsheet_unsafe
from warehouse.marts import Marts, marts_of

FORMATS = ("sherliic_csv", "sherliic_tsv", "levy_holt", "levy_holt_hosseini", "zeichner")

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

# Li et al. (2022): folder a_b holds the positives of subset a and the negatives of subset b.
LEVY_HOLT_SUBSETS = {
    "dirposi": "DirTrue",
    "dirnegi": "DirFalse",
    "symposi": "Paraphrases",
    "symnegi": "Unrelated",
}

_TYPED_ARG = re.compile(r"(\S+)\[([AB])\]")


@dataclass
class BenchmarkSummary:
    source_file: str
    fmt: str
    dataset: str
    split: str
    n_items: int
    n_mapped: int  # items with both paths
    batch_id: int | None
    skipped: bool  # already loaded (same checksum) and not replaced


# ---------------------------------------------------------------- readers


def _lines(path: Path) -> Iterable[tuple[int, str]]:
    """Lines of a benchmark file (the corpus readers' strict reading: UTF-8, BOM tolerated, no NUL)."""
    return read_lines(path)


def _check_header(path: Path, lines: Iterator[tuple[int, str]], expected: list[str]) -> None:
    """Consume the header line of a TSV; a missing or different header is an InputError."""
    try:
        _, header = next(lines)
    except StopIteration:
        raise InputError(str(path), None, "file is empty") from None
    columns = header.split("\t")
    if columns != expected:
        raise InputError(str(path), 1, f"unexpected header {columns}; expected {expected}")


def _split_from_name(path: Path) -> str:
    """train/dev/test from a file name such as `dev.csv`, `sherliic_test.csv`; else the stem."""
    for split in ("train", "dev", "test"):
        if re.search(rf"(^|[^a-z]){split}([^a-z]|$)", path.stem.lower()):
            return split
    return path.stem


def _label(value: str, path: Path, line: int) -> bool:
    v = value.strip().lower()
    if v in ("yes", "true", "1"):
        return True
    if v in ("no", "false", "0"):
        return False
    raise InputError(str(path), line, f"label {value!r} is not yes/no/True/False")


def _flag(value: str, path: Path, line: int, column: str) -> bool:
    if value not in ("True", "False"):
        raise InputError(str(path), line, f"column {column}: expected True or False, got {value!r}")
    return value == "True"


def _template_types(template: str) -> tuple[str | None, str | None, str | None]:
    """(type of A, type of B, middle words) of a SherLIiC template `region[A] is trading with location[B]`."""
    if not template:
        return None, None, None
    types = {arg: t for t, arg in _TYPED_ARG.findall(template)}
    middle = " ".join(_TYPED_ARG.sub(" ", template).split()) or None
    return types.get("A"), types.get("B"), middle


def _item(**kw) -> dict:
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


def read_sherliic_tsv(path: Path, dataset: str = "sherliic", split: str = "dev") -> list[dict]:
    """The shared SherLIiC-dev TSV: typed paths, templates (types from `type[A]`), sentences, labels."""
    items = []
    lines = iter(_lines(path))
    _check_header(path, lines, SHERLIIC_TSV_COLUMNS)
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
        pa, pb, pm = _template_types(r["premise_template"])
        ha, hb, hm = _template_types(r["hypothesis_template"])
        items.append(
            _item(
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
                label=_label(r["label"], path, number),
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
    for number, line in _lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise InputError(str(path), number, "expected `rel_id<TAB>path`")
        index[parts[0].strip()] = parts[1].strip()
    return index


def _arg_type(left: str, right: str) -> tuple[str | None, str | None]:
    """Types of A and B from the `type[A]` / `type[B]` argument columns of the release CSV."""
    found = {}
    for value in (left, right):
        m = _TYPED_ARG.fullmatch(value.strip())
        if m:
            found[m.group(2)] = m.group(1)
    return found.get("A"), found.get("B")


def read_sherliic_csv(
    path: Path, relation_index: Path | None = None, dataset: str = "sherliic", split: str | None = None
) -> list[dict]:
    """The original 22-column SherLIiC dev/test CSV (with header)."""
    split = split or _split_from_name(path)
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
        pa, pb = _arg_type(r["prem_argleft"], r["prem_argright"])
        ha, hb = _arg_type(r["hypo_argleft"], r["hypo_argright"])
        prem_text = " ".join(
            r[c] for c in ("prem_argleft", "prem_middle", "prem_argright", "prem_end") if r[c]
        )
        hypo_text = " ".join(
            r[c] for c in ("hypo_argleft", "hypo_middle", "hypo_argright", "hypo_end") if r[c]
        )
        items.append(
            _item(
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
                is_premise_reversed=_flag(r["is_prem_reversed"], path, number, "is_prem_reversed"),
                is_hypothesis_reversed=_flag(r["is_hypo_reversed"], path, number, "is_hypo_reversed"),
                premise_text=prem_text,
                hypothesis_text=hypo_text,
                premise_middle=r["prem_middle"],
                hypothesis_middle=r["hypo_middle"],
                label=_label(r["gold_label"], path, number),
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


def _triple(text: str, path: Path, line: int) -> tuple[str, str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3 or not all(parts):
        raise InputError(str(path), line, f"triple {text!r} is not `subject,predicate,object`")
    return parts[0], parts[1], parts[2]


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _triple_pair_item(prem: tuple[str, str, str], hypo: tuple[str, str, str], **kw) -> dict:
    """A text item: premise/hypothesis triples; A = the premise's first argument. `_parse` adds paths."""
    a, b = prem[0], prem[2]
    # the hypothesis' arguments in A/B order (Levy/Holt sometimes swaps them)
    swapped = _norm(hypo[0]) == _norm(b) and _norm(hypo[2]) == _norm(a) and _norm(a) != _norm(b)
    return _item(
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


def read_levy_holt(path: Path, dataset: str | None = None, split: str | None = None) -> list[dict]:
    """Teddy-Li Levy/Holt: `hypothesis<TAB>premise<TAB>True|False<TAB>lang` (hypothesis first)."""
    split = split or _split_from_name(path)
    folder = path.parent.name
    if dataset is None:
        dataset = "levy_holt" if folder == "orig" else f"levy_holt/{folder}"
    pos, _, neg = folder.partition("_")
    items = []
    for number, line in _lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) not in (3, 4):
            raise InputError(
                str(path), number, f"expected hypothesis, premise, label[, lang]; got {len(parts)} columns"
            )
        hypo, prem = _triple(parts[0], path, number), _triple(parts[1], path, number)
        label = _label(parts[2], path, number)
        extra = {"lang": parts[3] if len(parts) == 4 else None}
        if pos in LEVY_HOLT_SUBSETS and neg in LEVY_HOLT_SUBSETS:
            extra["subset"] = LEVY_HOLT_SUBSETS[pos if label else neg]
        items.append(
            _triple_pair_item(
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
    split = split or _split_from_name(path)
    items = []
    for number, line in _lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise InputError(str(path), number, f"expected q, p, label; got {len(parts)} columns")
        hypo, prem = _triple(parts[0], path, number), _triple(parts[1], path, number)
        items.append(
            _triple_pair_item(
                prem,
                hypo,
                item_id=f"{split}{number:05d}",
                dataset=dataset,
                split=split,
                line_number=number,
                label=_label(parts[2], path, number),
            )
        )
    return items


def _split_rule_sentence(sentence: str, rule: str) -> tuple[str, str, str] | None:
    """`The museum be open from March` with rule `be open from` -> (The museum, be open from, March)."""
    s, r = f" {sentence.strip()} ", f" {rule.strip()} "
    at = s.find(r)
    if at < 0:
        return None
    left, right = s[:at].strip(), s[at + len(r) :].strip()
    return (left, rule.strip(), right) if left and right else None


def read_zeichner(path: Path, dataset: str = "zeichner", split: str = "all") -> list[dict]:
    """Zeichner et al. (2012): `rule_lhs rule_rhs lhs rhs judgment confidence`; `@R@` = reversed rhs."""
    items = []
    lines = iter(_lines(path))
    _check_header(path, lines, ["rule_lhs", "rule_rhs", "lhs", "rhs", "judgment", "confidence"])
    for number, line in lines:
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 6:
            raise InputError(str(path), number, f"expected 6 tab-separated columns, got {len(parts)}")
        rule_lhs, rule_rhs, lhs, rhs, judgment, confidence = parts
        rhs_reversed = rule_rhs.endswith("@R@")
        prem = _split_rule_sentence(lhs, rule_lhs)
        hypo = _split_rule_sentence(rhs, rule_rhs.removesuffix("@R@"))
        extra = {"rule_lhs": rule_lhs, "rule_rhs": rule_rhs, "confidence": confidence}
        kw = dict(
            item_id=f"{path.stem}:{number}",
            dataset=dataset,
            split=split,
            line_number=number,
            label=_label(judgment, path, number),
        )
        if prem is None or hypo is None:
            items.append(
                _item(
                    premise_text=lhs,
                    hypothesis_text=rhs,
                    premise_middle=rule_lhs,
                    hypothesis_middle=rule_rhs.removesuffix("@R@"),
                    extra=extra,
                    **kw,
                )
            )
            continue
        item = _triple_pair_item(prem, hypo, extra=extra, **kw)
        item["extra"]["_parse"]["hypothesis"][3] = rhs_reversed  # "Y rule X": A is on the right
        items.append(item)
    return items


# ---------------------------------------------------------------- parsing text items


def _arg_heads(doc, sentence_text: str, first: str, second: str):
    """Token heads of the first and last argument of `first predicate second` in a parsed doc."""
    from deppath.paths import DepSentence

    span1 = doc.char_span(0, len(first), alignment_mode="expand")
    start2 = len(sentence_text) - len(second)
    span2 = doc.char_span(start2, len(sentence_text), alignment_mode="expand")
    if span1 is None or span2 is None or span1.end > span2.start:
        return None
    dep = DepSentence.from_span(doc[:]).stanford
    return dep, dep.span_root(span1.start, span1.end - 1), dep.span_root(span2.start, span2.end - 1)


def parse_text_items(items: list[dict], *, show_progress: bool = True) -> None:
    """Fill premise/hypothesis paths of text items in place (A -> B, SherLIiC orientation)."""
    from deppath.filters import rejection_rule
    from deppath.parsing import load_nlp
    from deppath.paths import path_between

    todo = [it for it in items if "_parse" in it["extra"]]
    if not todo:
        return
    sentences = sorted({f"{p[0]} {p[1]} {p[2]}" for it in todo for p in it["extra"]["_parse"].values()})
    nlp = load_nlp(ner=False)
    docs = {}
    for text, doc in zip(
        sentences,
        tqdm(
            nlp.pipe(sentences, batch_size=256),
            total=len(sentences),
            desc="parsing benchmark sentences",
            disable=not show_progress,
            unit="sent",
        ),
        strict=True,
    ):
        docs[text] = doc
    for it in todo:
        parse = it["extra"].pop("_parse")
        for side in ("premise", "hypothesis"):
            first, pred, second, a_on_right = parse[side]
            text = f"{first} {pred} {second}"
            heads = _arg_heads(docs[text], text, first, second)
            path = ""
            if heads is not None:
                dep, h1, h2 = heads
                if h1 != h2:
                    path = path_between(dep, h2, h1) if a_on_right else path_between(dep, h1, h2)
            if path:
                it[f"{side}_path"] = path
                it[f"is_{side}_reversed"] = is_reversed(path)
                rule = rejection_rule(path)
                if rule is not None:
                    it["extra"][f"{side}_rejected_by"] = rule
            else:
                it[f"{side}_path"] = None


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


# ---------------------------------------------------------------- loading into Postgres


def _checksum(path: Path, extra: bytes = b"") -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    h.update(extra)
    return h.hexdigest()


def load_benchmark(
    path: str | Path,
    fmt: str,
    url: str | None = None,
    *,
    dataset: str | None = None,
    split: str | None = None,
    relation_index: str | Path | None = None,
    replace: bool = False,
    show_progress: bool = True,
) -> BenchmarkSummary:
    """Load one benchmark file into raw.benchmark_items as one batch (transactional, idempotent), with
    the corpus loader's batch lifecycle (extract.batches): advisory locks, a `failed` row on bad input.

    A file already loaded (same bytes, format, dataset, split and relation index) is skipped unless
    `replace`. Each (dataset, split, item id) is loaded once: a file whose item ids are already loaded
    from another batch (another file, or an earlier version of this one) is refused, or with `replace`
    takes that batch's place, in the same transaction.
    """
    from extract.batches import _Batch

    path = check_input_file(path)
    if fmt not in FORMATS:
        raise ValueError(f"unknown benchmark format {fmt!r}; known: {', '.join(FORMATS)}")
    options = {
        "dataset": dataset,
        "split": split,
        "relation_index": str(relation_index) if relation_index else None,
    }
    rel_bytes = check_input_file(relation_index).read_bytes() if relation_index else b""
    checksum = _checksum(path, json.dumps(options, sort_keys=True).encode() + rel_bytes)
    url = url or server.database_url()
    batch = _Batch(path, fmt, "benchmark", url, replace, options, checksum=checksum, by_path=False)
    loaded: list[dict] = []

    def write(conn, batch_id: int) -> dict[str, int]:
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
        cols = list(ITEM_COLUMNS)
        with conn.cursor().copy(f"copy raw.benchmark_items (batch_id, {', '.join(cols)}) from stdin") as copy:
            for it in items:
                copy.write_row([batch_id, *[json.dumps(it[c]) if c == "extra" else it[c] for c in cols]])
        overlapping = conn.execute(
            "select old.batch_id, min(b.source_file), min(old.dataset || '/' || old.split), "
            "min(old.item_id), count(*) "
            "from raw.benchmark_items new "
            "join raw.benchmark_items old using (dataset, split, item_id) "
            "join raw.load_batches b on b.batch_id = old.batch_id and b.status = 'loaded' "
            "where new.batch_id = %s and old.batch_id <> new.batch_id group by old.batch_id",
            (batch_id,),
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
        if overlapping:
            old_batches = [row[0] for row in overlapping]
            conn.execute("delete from raw.load_batches where batch_id = any(%s)", (old_batches,))
            batch.summary.replaced_batches += old_batches
        loaded.extend(items)
        mapped = sum(1 for it in items if it["premise_path"] and it["hypothesis_path"])
        return {"rows": len(items), "mapped": mapped}

    summary = batch.run(write)
    if summary.skipped:
        with server.connect(url) as conn:
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


def load_items(url: str | None = None, datasets: Iterable[str] | None = None) -> pd.DataFrame:
    """The items DataFrame of baselines.registry from every loaded benchmark batch (optionally filtered)."""
    url = url or server.database_url()
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
    with server.connect(url) as conn:
        rows = conn.execute(query, params).fetchall()
    return items_frame([dict(zip(ITEM_COLUMNS, r, strict=True)) for r in rows])


def items_frame(items: list[dict]) -> pd.DataFrame:
    """Item dicts -> the registry's DataFrame (object columns; reversal flags as bool, None -> False)."""
    df = pd.DataFrame(items, columns=ITEM_COLUMNS)
    for col in ("is_premise_reversed", "is_hypothesis_reversed"):
        df[col] = df[col].map(lambda v: bool(v) if v is not None and v == v else False).astype(bool)
    df["label"] = df["label"].astype(bool)
    df = df.reset_index(drop=True)
    return df


def warehouse_coverage(items: pd.DataFrame, warehouse: str | Marts | None = None) -> pd.DataFrame:
    """Per dataset/split: items whose two paths map (canonical_path) to relations in warehouse.relations
    (read from a Postgres URL, default the project's, or from open marts of either engine).

    Returns columns dataset, split, n_items, n_with_paths, n_in_warehouse (n_in_warehouse is None when the
    warehouse has not been built).
    """
    with marts_of(warehouse or server.database_url()) as marts:
        exists = marts.has_table("warehouse", "relations")
        known = {r[0] for r in marts.stream("select path from warehouse.relations")} if exists else None
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


__all__ = [
    "BenchmarkSummary",
    "FORMATS",
    "ITEM_COLUMNS",
    "items_frame",
    "load_benchmark",
    "load_items",
    "read_benchmark",
    "shared_benchmark_files",
    "warehouse_coverage",
]
