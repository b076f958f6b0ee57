"""The loaders: corpora, entity-type tables and type maps into the raw schema, one batch per input
file, on the Target's engine (Postgres or Spark).

    load_corpus(target, "news.jsonl", "jsonl", corpus="news")
    load_types(target, "types.tsv", "tsv", type_source="freebase")
    load_type_map(target, "types.map")

The batch lifecycle is the batch store's (:mod:`extract.batches.store`): one file = one batch with the
sha256 of its content (of a text file: independent of line endings and trailing whitespace,
:func:`~extract.batches.store.text_checksum`); the same content again is skipped (``replace=True``
reloads it); other content at a loaded path is refused unless replacing; a batch is written whole or not
at all, whatever stops it (bad input is an
:class:`InputError` ``file:line: problem`` and a 'failed' batch row); ``skip_bad=True`` counts bad
records instead (``n_bad_lines``; the first messages are kept in the batch's options). :func:`load_corpus`
shares its plan (:mod:`extract.load_plan`) between the engines and writes its rows with the engine's
own corpus writer (:mod:`extract.postgres_load`, :mod:`extract.spark_load`); type tables and maps are
written the same way on both. A corpus batch belongs to a named corpus (default: the file's stem): the
dbt var ``corpora`` builds the graph from some corpora only; a file's content belongs to one corpus.
List and remove batches with :func:`extract.batches.store.open_batch_store`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from extract import postgres_load, spark_load
from extract.batches.store import (
    BatchClaim,
    BatchSummary,
    BatchWriter,
    file_checksum,
    open_batch_store,
    text_checksum,
)
from extract.formats import BINARY_FORMATS
from extract.load_plan import bad_lines, plan_corpus
from extract.types import (
    DEFAULT_SOURCE,
    TYPE_FORMATS,
    read_figer_map,
    read_type_rows,
    textent_titles,
    title_type_rows,
)
from files.reading import check_id, check_input_file
from warehouse.errors import ConfigurationError, InputError
from warehouse.settings import out_folder
from warehouse.target import Target

ENTITY_TYPE_COLUMNS = ("entity_id", "type_name", "type_source")
TYPE_MAP_COLUMNS = ("source_type", "target_type")


def load_corpus(
    target: Target,
    path: str | Path,
    fmt: str,
    *,
    corpus: str | None = None,
    replace: bool = False,
    skip_bad: bool = False,
    processes: int = 1,
    ner_types: bool = False,
    ner_mentions: bool = False,
    limit: int | None = None,
    reader_options: dict | None = None,
    progress: Callable[[int], None] | None = None,
    on_duplicate: str = "error",
    alignment: str | None = None,
    spacy_model: str | None = None,
) -> BatchSummary:
    """Read, parse, extract and load one corpus file as one batch of corpus `corpus` (default: the
    file's stem; see the module doc).

    processes: processes that parse and extract (Postgres; on Spark the cluster's cores decide).
    ner_types: type linked mentions with spaCy NER labels (majority per entity, type_source ``ner``);
    ner_mentions: also add NER entities not covered by a linked mention (id = normalised name).
    limit: read at most this many documents (the batch options record it). progress: called with the
    number of documents done (the CLI's progress bar). on_duplicate: a document id already used in the
    corpus is an error naming both documents ("error") or the later document is skipped ("skip").
    alignment: what mention offsets that cut through a token become (strict, expand, contract; default
    the format's own); spacy_model: the spaCy pipeline that parses (default deppath.parsing.MODEL).
    """
    plan = plan_corpus(
        path,
        fmt,
        corpus=corpus,
        reader_options=reader_options,
        ner_types=ner_types,
        ner_mentions=ner_mentions,
        limit=limit,
        skip_bad=skip_bad,
        on_duplicate=on_duplicate,
        alignment=alignment,
        spacy_model=spacy_model,
    )
    if target.engine == "spark":
        engine = {"engine": "spark", "parallelism": spark_load.parallelism(target)}
        write = spark_load.corpus_writer(plan, progress)
    else:
        engine = {"processes": processes}
        write = postgres_load.corpus_writer(plan, processes, progress)
    options = {**engine, "skip_bad": skip_bad, **plan.options}
    claim = _claim(plan.path, fmt, "corpus", options, corpus=plan.corpus, replace=replace)
    return _load(target, claim, write)


def load_types(
    target: Target,
    path: str | Path,
    fmt: str,
    *,
    replace: bool = False,
    skip_bad: bool = False,
    type_source: str | None = None,
) -> BatchSummary:
    """Load an entity-type table (formats in extract.types: tsv, ntriples, textent) as one batch of
    raw.entity_types; type_source: stored with the types (default: the format's own)."""
    if fmt not in TYPE_FORMATS:
        raise ValueError(f"unknown type-table format {fmt!r}; choose one of: {', '.join(TYPE_FORMATS)}")
    path = check_input_file(Path(path))
    source = check_id(type_source or DEFAULT_SOURCE[fmt], "type source", path, None)
    bad = bad_lines(skip_bad)
    stats: dict = {}

    def write(writer: BatchWriter) -> dict[str, int]:
        rows = ((e, t, source) for e, t in read_type_rows(path, fmt, bad, stats))
        n = writer.write_rows("entity_types", ENTITY_TYPE_COLUMNS, rows, distinct=True)
        if n == 0:
            raise InputError(str(path), None, "no type rows in the file")
        entities = writer.count("entity_types", "count(distinct entity_id)")
        writer.summary.reader_stats = stats
        writer.summary.bad_lines = bad.messages if bad else []
        writer.summary.bad_line_numbers = bad.line_numbers() if bad else []
        return {"rows": n, "typed_entities": entities, "bad_lines": bad.count if bad else 0}

    options = {"type_source": source, "skip_bad": skip_bad}
    return _load(target, _claim(path, fmt, "types", options, replace=replace), write)


def load_type_map(
    target: Target,
    path: str | Path,
    *,
    fmt: str = "figer_map",
    replace: bool = False,
    skip_bad: bool = False,
) -> BatchSummary:
    """Load a type map (``figer_map``: Freebase type → FIGER type) as one batch of raw.type_mappings."""
    if fmt != "figer_map":
        raise ValueError(f"unknown type-map format {fmt!r}; choose: figer_map")
    path = check_input_file(Path(path))
    bad = bad_lines(skip_bad)

    def write(writer: BatchWriter) -> dict[str, int]:
        n = writer.write_rows("type_mappings", TYPE_MAP_COLUMNS, read_figer_map(path, bad), distinct=True)
        if n == 0:
            raise InputError(str(path), None, "no mappings in the file")
        writer.summary.bad_lines = bad.messages if bad else []
        writer.summary.bad_line_numbers = bad.line_numbers() if bad else []
        return {"rows": n, "bad_lines": bad.count if bad else 0}

    return _load(target, _claim(path, fmt, "type_map", {"skip_bad": skip_bad}, replace=replace), write)


def load_title_types(
    target: Target,
    textent_paths: list[Path],
    *,
    replace: bool = False,
    entity_pattern: str = r"^Q[0-9]+$",
    out_dir: Path | None = None,
) -> BatchSummary:
    """Type KG-less entities (default: Wikidata QIDs) by joining their names with textent's Wikipedia
    titles (Postgres).

    Writes a ``types`` batch of format ``textent_title`` (type_source ``textent_title``) from a derived
    TSV under out/derived whose checksum covers the textent files and the matched rows: rerunning with
    unchanged inputs loads nothing; new matches (more corpora loaded) replace the previous batch.
    """
    if target.engine != "postgres":
        raise ConfigurationError(f"textent title types are loaded on Postgres only, not on {target.engine}")
    target.ensure_schema()
    paths = [check_input_file(Path(p)) for p in textent_paths]
    titles = textent_titles(paths)
    with target.connect() as conn:
        entities = conn.execute(
            "select e.entity_id, min(e.entity_name) from raw.entities e "
            "join raw.load_batches b using (batch_id) "
            "where b.status = 'loaded' and e.entity_id ~ %s group by e.entity_id order by e.entity_id",
            (entity_pattern,),
        ).fetchall()
        database = conn.execute("select current_database()").fetchone()[0]
    rows = sorted(set(title_type_rows(entities, titles)))
    # A small manifest file under out/ makes the derived table an ordinary, checksummed input; one per
    # database: runs against different databases never overwrite each other's input.
    manifest = (out_dir or out_folder() / "derived") / f"textent_title_types.{database}.tsv"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    header = "# derived from " + ", ".join(f"{p.name}:{file_checksum(p)[:12]}" for p in paths) + "\n"
    manifest.write_text(header + "".join(f"{e}\t{t}\n" for e, t in rows) or header, encoding="utf-8")

    def write(writer: BatchWriter) -> dict[str, int]:
        n = writer.write_rows(
            "entity_types", ENTITY_TYPE_COLUMNS, ((e, t, "textent_title") for e, t in rows), distinct=True
        )
        return {"rows": n, "typed_entities": len({e for e, _ in rows}), "candidates": len(entities)}

    options = {"type_source": "textent_title", "candidates": len(entities)}
    claim = BatchClaim(
        manifest, "textent_title", "types", file_checksum(manifest), options, replace=replace, supersede=True
    )
    return _load(target, claim, write)


def _claim(
    path: Path, fmt: str, kind: str, options: dict, *, corpus: str | None = None, replace: bool = False
) -> BatchClaim:
    """The claim of an input file by its content: a text file's checksum ignores its layout, and a batch
    recorded by the checksum of the file's bytes (as before) holds the same content."""
    if fmt in BINARY_FORMATS:
        return BatchClaim(path, fmt, kind, file_checksum(path), options, corpus=corpus, replace=replace)
    checksum, as_bytes = text_checksum(path), file_checksum(path)
    return BatchClaim(
        path, fmt, kind, checksum, options, corpus=corpus, replace=replace, same_content=(as_bytes,)
    )


def _load(target: Target, claim: BatchClaim, write: Callable[[BatchWriter], dict[str, int]]) -> BatchSummary:
    with open_batch_store(target) as store:
        return store.load(claim, write)
