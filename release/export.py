"""Export the dbt marts of a build (schema `warehouse`, or `build_<name>` with `--build NAME`) in SherLIiC's
release formats.

`sherliic-export [--build NAME] [--out DIR]` (or `make export [BUILD=NAME] [OUT=DIR]`) writes, after
`dbt run`, into the build's own folder, ``out/export/<build>/`` (``out/export/default/`` for the default
build, ``out/export/NAME/`` for a named one; SHERLIIC_OUT moves ``out/``), so that exports of two builds
never share a folder; ``--out`` chooses another (replacing another build's export there says so):

- ``teg.tsv`` — the typed event graph, one line per (typed relation, entity pair), no header:
  ``type_id<TAB>rel_id<TAB>arg1<TAB>arg2<TAB>count``. ``type_id`` is the per-relation type id
  (``typed_relations.tsg_index``, SherLIiC's ``~N~``); (rel_id, type_id) identifies a typed relation.
  ``arg1``/``arg2`` are integer entity ids (``entity_index.tsv``), arg1 = subject side;
  ``count`` = instances of the pair with the relation.
- ``teg-untyped.tsv`` — the untyped graph, no header: ``rel_id<TAB>arg1<TAB>arg2<TAB>count``.
- ``relation_index.tsv`` — no header: ``rel_id<TAB>path`` (canonical path, argument A = left = subject).
- ``entity_index.tsv`` — no header: ``entity_id<TAB>source_entity_id<TAB>entity_name``
  (not in the original release; maps the integer ids back to the loaded ids).
- ``type_index.json`` — ``{rel_id: {type_id: [tsg_a, tsg_b]}}`` with rel_id/type_id as JSON object
  keys (strings) and each tsg component a sorted list of type names (``["thing"]`` = ⊤).
- ``rules.tsv`` — the inference candidates, with a header line: ``premise``, ``conclusion``
  (typed relations as ``type_id~rel_id``, the order of SherLIiC's own ``combine_type(type_id, rel_id)``,
  so the first five columns read like SherLIiC's rule files), ``relv``, ``sigma``, ``esr``, ``score``,
  ``alignment``
  (straight: A(x,y) ⇒ B(x,y); crossed: A(x,y) ⇒ B(y,x)), ``rank_for_hypothesis``,
  ``premise_type_a``, ``premise_type_b``, ``conclusion_type_a``, ``conclusion_type_b``,
  ``premise_tsg``, ``conclusion_tsg`` (``tsg_a/tsg_b``, each component's types joined by ``|``),
  ``premise_path``, ``conclusion_path``, ``overlap_size``, ``candidate_key`` (the mart's stable key:
  md5 of both typed relations' natural keys and the alignment, the same in every build).
- ``relation_rules.tsv`` — the ``rules`` mart, one line per rule between relations (aggregated over its
  typings), with a header line: ``premise_rel_id``, ``conclusion_rel_id``, ``alignment``, ``premise_path``,
  ``conclusion_path``, ``n_typings``, ``typings`` (each ``(a, b) => (c, d)``, joined by ``; ``),
  ``best_typing``, ``best_relv``, ``best_sigma``, ``best_esr``, ``best_score``, ``summed_score``,
  ``rule_key`` (stable across builds).
- ``manifest.json`` — what the files are: the build (name, its record in builds.builds: vars, corpora
  with batch ids and checksums, type tables, code, versions, row counts; the corpora of mart teg_corpora
  when the build has no record) and, per file, its rows, bytes and sha256.
- ``rules_verifier.tsv`` — a verifier score for every rule of rules.tsv and verifier that ranked the
  build (`make rank`; release/verifier_file.py).

Integer ids (rel_id, entity_id, typed ids) are assigned by each dbt build; export them together.

Atomic: the files (manifest.json too) are written into a temporary folder inside the output folder
(``.export-*``) and, once all are complete and on disk, each is renamed over its namesake. A failed export
(a full disk, a killed process, a missing mart) leaves the previous files whole; a file name that is a
symbolic link is replaced, never written through.

Spreadsheet formulas: text written for people (entity names here; sentences, templates and example
lists in the annotation CSVs) gets a leading apostrophe when it starts with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return, so a spreadsheet shows it instead of evaluating it (files/spreadsheet.py).
Machine fields are written verbatim: numbers (scores may be negative), integer ids, dependency paths
and type names (they start with a letter or ``/``) and loaded entity ids (keys to map results back).
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import click

from builds import records as build_records
from files.spreadsheet import sql_spreadsheet_safe
from release.verifier_file import VERIFIER_FILE, export_verifier_scores
from warehouse.command_line import (
    CONTEXT,
    OUTPUT_FOLDER,
    run,
    target_options,
    version_option,
)
from warehouse.errors import DatabaseUnavailable, print_error
from warehouse.settings import out_folder
from warehouse.target import ENGINES, Marts, Target
from warehouse.terminal import Progress

MARTS = (
    "relations", "entities", "typed_relations", "teg_edges", "untyped_edges", "inference_candidates", "rules",
)  # fmt: skip
MANIFEST = "manifest.json"
STAGING_PREFIX = ".export-"  # the temporary folder inside the output folder
# file name -> query whose rows are written as tab-separated lines (COPY text format, no header);
# {schema}: the marts schema of the exported build
TSV_EXPORTS: dict[str, str] = {
    "teg.tsv": """
        select typed.tsg_index, edges.rel_id, edges.arg1_entity_id, edges.arg2_entity_id, edges.n_instances
        from {schema}.teg_edges as edges
        inner join {schema}.typed_relations as typed on edges.typed_rel_id = typed.typed_rel_id
        order by edges.rel_id, typed.tsg_index, edges.arg1_entity_id, edges.arg2_entity_id""",
    "teg-untyped.tsv": """
        select rel_id, arg1_entity_id, arg2_entity_id, n_instances
        from {schema}.untyped_edges
        order by rel_id, arg1_entity_id, arg2_entity_id""",
    "relation_index.tsv": "select rel_id, path from {schema}.relations order by rel_id",
    "entity_index.tsv": """
        select entity_id, source_entity_id, """
    + sql_spreadsheet_safe("entities.entity_name")
    + """
        from {schema}.entities as entities order by entity_id""",
}

RULES_QUERY = """
    select
        candidates.premise_tsg_index || '~' || candidates.premise_rel_id as premise,
        candidates.hypothesis_tsg_index || '~' || candidates.hypothesis_rel_id as conclusion,
        candidates.relv,
        candidates.sigma,
        candidates.esr,
        candidates.score,
        candidates.alignment,
        candidates.rank_for_hypothesis,
        candidates.premise_type_a,
        candidates.premise_type_b,
        candidates.hypothesis_type_a as conclusion_type_a,
        candidates.hypothesis_type_b as conclusion_type_b,
        {array_join}(premise.tsg_a, '|') || '/' || {array_join}(premise.tsg_b, '|') as premise_tsg,
        {array_join}(hypothesis.tsg_a, '|') || '/' || {array_join}(hypothesis.tsg_b, '|')
            as conclusion_tsg,
        candidates.premise_path,
        candidates.hypothesis_path as conclusion_path,
        candidates.overlap_size,
        candidates.candidate_key
    from {schema}.inference_candidates as candidates
    inner join {schema}.typed_relations as premise on candidates.premise_typed_rel_id = premise.typed_rel_id
    inner join {schema}.typed_relations as hypothesis
        on candidates.hypothesis_typed_rel_id = hypothesis.typed_rel_id
    order by candidates.hypothesis_rel_id, candidates.hypothesis_tsg_index, candidates.rank_for_hypothesis"""


@dataclass(frozen=True)
class ExportSummary:
    out_dir: Path
    rows: dict[str, int]  # file name -> data rows written (header not counted; type_index: typed relations)
    replaced_build: str | None = None  # the other build whose export out_dir held before, if any


def default_out_dir(target: Target) -> Path:
    """The folder of a build's export unless told otherwise: out/export/<build>/ (out/export/default/ for
    the default build; a named build cannot be called "default"), one per build like out/rank/<build>/,
    so that no export of one build replaces another's and no build's release folder holds another's."""
    return out_folder() / "export" / target.build_name


def exported_build(out: Path) -> str | None:
    """The build whose export `out` holds (its manifest.json), or None (no export, or unreadable)."""
    try:
        build = json.loads((out / MANIFEST).read_text(encoding="utf-8")).get("build")
    except (OSError, ValueError, AttributeError):
        return None
    return build if isinstance(build, str) else None


def _copy_to_file(conn, query: str, path: Path, header: bool = False) -> int:
    """Postgres: COPY a query to `path` as tab-separated text; returns the number of data rows."""
    options = "format csv, delimiter E'\\t', header" if header else "format text"
    n_rows = 0
    with path.open("wb") as handle, conn.cursor().copy(f"copy ({query}) to stdout with ({options})") as copy:
        for chunk in copy:
            data = bytes(chunk)
            n_rows += data.count(b"\n")
            handle.write(data)
    return n_rows - (1 if header else 0)


def postgres_float(value: float) -> str:
    """A double as Postgres prints it (float8out: shortest round-trip digits, exponent form below 1e-4
    and from 1e15), so that files written from Spark's rows equal Postgres' COPY output."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digits, exponent = _shortest_decimal(value).normalize().as_tuple()
    text = "".join(map(str, digits))
    magnitude = len(text) - 1 + exponent  # decimal exponent of the first digit
    if magnitude < -4 or magnitude >= 15:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        body = f"{mantissa}e{'-' if magnitude < 0 else '+'}{abs(magnitude):02d}"
    else:
        body = format(Decimal((0, digits, exponent)), "f")
    return ("-" if sign else "") + body


def _shortest_decimal(value: float) -> Decimal:
    """The shortest decimal that reads back as `value` (Python's repr), except that Postgres' Ryu does
    not accept a decimal lying exactly halfway to the next double (large integral doubles): then the
    shortest correctly rounded decimal strictly nearer to `value`."""
    shortest = Decimal(repr(value))
    exact = Decimal(value)
    if shortest == exact:
        return shortest
    neighbour = Decimal(math.nextafter(value, math.inf if shortest > exact else -math.inf))
    if shortest - exact != neighbour - shortest:
        return shortest
    for precision in range(len(shortest.as_tuple().digits) + 1, 18):
        candidate = Decimal(f"{value:.{precision - 1}e}")
        if float(candidate) == value and candidate - exact != neighbour - candidate:
            return candidate
    return Decimal(f"{value:.16e}")


def _text_value(value) -> str:
    """COPY text format: \\N for null, backslash escapes for tab/newline/CR/backslash."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, float):
        return postgres_float(value)
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _csv_value(value) -> str:
    """COPY csv format (tab delimiter): null unquoted empty, quotes around text with a tab, quote, newline
    or CR and around the empty string."""
    if value is None:
        return ""
    text = postgres_float(value) if isinstance(value, float) else str(value)
    if text == "" or any(c in text for c in '\t"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _write_rows(rows, path: Path, columns: list[str] | None = None) -> int:
    """Spark: rows written as Postgres' COPY would (text format, or csv with a header when `columns`)."""
    n_rows = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        if columns is not None:
            handle.write("\t".join(columns) + "\n")
        value = _csv_value if columns is not None else _text_value
        for row in rows:
            handle.write("\t".join(value(v) for v in row) + "\n")
            n_rows += 1
    return n_rows


RELATION_RULES_QUERY = """
    select
        premise_rel_id,
        hypothesis_rel_id as conclusion_rel_id,
        alignment,
        premise_path,
        hypothesis_path as conclusion_path,
        n_typings,
        {array_join}(typings, '; ') as typings,
        best_typing,
        best_relv,
        best_sigma,
        best_esr,
        best_score,
        summed_score,
        rule_key
    from {schema}.rules
    order by hypothesis_rel_id, premise_rel_id, alignment"""
RELATION_RULES_COLUMNS = [
    "premise_rel_id", "conclusion_rel_id", "alignment", "premise_path", "conclusion_path", "n_typings",
    "typings", "best_typing", "best_relv", "best_sigma", "best_esr", "best_score", "summed_score", "rule_key",
]  # fmt: skip
RULES_COLUMNS = [
    "premise", "conclusion", "relv", "sigma", "esr", "score", "alignment", "rank_for_hypothesis",
    "premise_type_a", "premise_type_b", "conclusion_type_a", "conclusion_type_b", "premise_tsg",
    "conclusion_tsg", "premise_path", "conclusion_path", "overlap_size", "candidate_key",
]  # fmt: skip


def _type_index(marts: Marts) -> dict[str, dict[str, list[list[str]]]]:
    index: dict[str, dict[str, list[list[str]]]] = {}
    rows = marts.stream(
        f"select rel_id, tsg_index, tsg_a, tsg_b from {marts.schema}.typed_relations "
        "order by rel_id, tsg_index"
    )
    for rel_id, tsg_index, tsg_a, tsg_b in rows:
        index.setdefault(str(rel_id), {})[str(tsg_index)] = [list(tsg_a), list(tsg_b)]
    return index


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _check_replaceable(out: Path, names: list[str]) -> None:
    """Refuse before anything is written (or replaced) when a file name in `out` is taken by a folder."""
    for name in names:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file: nothing exported", str(path))


@contextmanager
def staged_files(out: Path, names: list[str]) -> Iterator[Path]:
    """A temporary folder inside `out` (created if needed) to write files into (`names`: those expected,
    checked first); when the block ends without an error, each file written there is flushed to disk and
    renamed over its namesake in `out` (atomic; a symbolic link there is replaced, not followed). On an
    error nothing in `out` changes. The temporary folder is removed either way."""
    out.mkdir(parents=True, exist_ok=True)
    _check_replaceable(out, names)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
    try:
        try:
            yield staging
        except OSError as error:  # a full disk, a file size limit: say where, and that nothing changed
            if error.filename is not None or error.strerror is None:
                raise
            problem = f"{error.strerror} while writing the export; nothing changed in this folder"
            raise OSError(error.errno, problem, str(out)) from None
        written = sorted(staging.iterdir())
        for path in written:
            _fsync(path)
        _check_replaceable(out, [path.name for path in written])
        for path in written:
            os.replace(path, out / path.name)
        _fsync(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def export(target: Target, out_dir: Path | str) -> ExportSummary:
    """Write every release file of the module docstring into `out_dir` (created if needed), from the
    marts of the Target's build (read in read-only transactions), and manifest.json last; the files
    replace the previous ones only once all are written (:func:`staged_files`)."""
    out = Path(out_dir)
    previous = exported_build(out)
    steps = [*TSV_EXPORTS, "type_index.json", "rules.tsv", "relation_rules.tsv"]
    with staged_files(out, [*steps, MANIFEST]) as staging:
        counts, corpora, record = _write_files(target, staging, steps)
        write_manifest(staging, target, counts, corpora, record)
    replaced = previous if previous is not None and previous != target.build_name else None
    return ExportSummary(out, counts, replaced)


def _write_files(
    target: Target, folder: Path, steps: list[str]
) -> tuple[dict[str, int], list[str], build_records.BuildRecord | None]:
    """Write the files `steps` into `folder` from the Target's marts: each file's rows, the corpora of the
    build, and its record. On Postgres one read-only transaction reads them all, and takes its locks on
    the build's marts before it reads anything: a build publishing meanwhile waits for the export (it
    never takes a lock that the export holds), so the files and the record are of one build."""
    counts: dict[str, int] = {}
    with target.marts(read_only=True) as marts:
        schema = marts.schema
        if marts.engine == "postgres":
            build_records.lock_marts_for_reading(marts.connection, schema)
        record = build_records.current_build(
            target, conn=marts.connection if marts.engine == "postgres" else None
        )
        missing = [table for table in MARTS if not marts.has_table(schema, table)]
        if missing:
            named = f" --build {target.build}" if target.build else ""
            raise RuntimeError(
                f"marts missing in schema {schema}: {', '.join(missing)} "
                f"(run `sherliic-dbt run{named}` first)"
            )
        array_join = marts.function("array_join")
        # file name -> (query, header columns or None)
        queries = {name: (query.format(schema=schema), None) for name, query in TSV_EXPORTS.items()}
        queries["rules.tsv"] = (RULES_QUERY.format(schema=schema, array_join=array_join), RULES_COLUMNS)
        queries["relation_rules.tsv"] = (
            RELATION_RULES_QUERY.format(schema=schema, array_join=array_join),
            RELATION_RULES_COLUMNS,
        )
        bar = Progress(steps, unit="file")  # in a log: a line per file
        for name in bar:
            bar.set_description(f"export {name}")
            path = folder / name
            if name == "type_index.json":
                index = _type_index(marts)
                text = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
                path.write_text(text + "\n", encoding="utf-8")
                counts[name] = sum(len(types) for types in index.values())
                continue
            query, header = queries[name]
            if marts.engine == "postgres":
                counts[name] = _copy_to_file(marts.connection, query, path, header=header is not None)
            else:
                counts[name] = _write_rows(marts.stream(query), path, header)
        # the rules' verifier scores (make rank)
        counts[VERIFIER_FILE] = export_verifier_scores(marts, folder)
        corpora = [row[0] for row in marts.rows(f"select corpus_name from {schema}.teg_corpora order by 1")]
    return counts, corpora, record


def write_manifest(
    out: Path,
    target: Target,
    counts: dict[str, int],
    corpora: list[str],
    record: build_records.BuildRecord | None,
) -> Path:
    """manifest.json in `out`: the exported build's provenance (its record, read with the files) and each
    file's rows, bytes and sha256."""
    files = {}
    for name, n_rows in counts.items():
        data = (out / name).read_bytes()
        files[name] = {"rows": n_rows, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    manifest = {
        "build": target.build_name,
        "build_id": None if record is None else record.build_id,
        "schema": target.marts_schema,
        "engine": target.engine,
        "corpora": corpora,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "record": None if record is None else record.provenance(),
        "files": files,
    }
    path = out / MANIFEST
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


@click.command(context_settings=CONTEXT)
@version_option
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    default=None,
    help="Output folder (default: the build's own, out/export/<build>: out/export/default for the default "
    "build, out/export/NAME for --build NAME; SHERLIIC_OUT moves out/).",
)
@target_options(engines=ENGINES, build=True)
def cli(out: Path | None, target: Target) -> int:
    """Export the marts of a build in SherLIiC's release formats (after `sherliic-dbt run`).

    Writes teg.tsv, teg-untyped.tsv, relation_index.tsv, entity_index.tsv, type_index.json, rules.tsv,
    relation_rules.tsv, rules_verifier.tsv and manifest.json (the build's provenance, a sha256 per file)
    into OUT, by default the build's own folder out/export/<build> (formats: docs/design.md §5.4). Replacing
    another build's export in OUT is said in one line. Exit code 1 when the marts are missing."""
    try:
        summary = export(target, default_out_dir(target) if out is None else out)
    except DatabaseUnavailable:
        raise  # one `error:` line, exit 2 (warehouse.command_line.run)
    except RuntimeError as error:
        print_error(error)
        return 1
    for name, n_rows in summary.rows.items():
        print(f"{summary.out_dir / name}: {n_rows} rows")
    print(f"{summary.out_dir / MANIFEST}: build {target.build_name}")
    if summary.replaced_build is not None:
        print(
            f"note: {summary.out_dir} held the export of build {summary.replaced_build}; it now holds build "
            f"{target.build_name}'s (without --out each build has its own folder, out/export/<build>)"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="sherliic-export")


if __name__ == "__main__":
    sys.exit(main())
