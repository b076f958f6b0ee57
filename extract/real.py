"""Extract the shared real corpora with the shared type tables (``sherliic-extract real``).

Inputs (from :func:`warehouse.settings.shared_data_dir`): FewRel val_wiki + val_nyt + test_nyt, every
T-REx ``P*.jsonl``, Google-RE (LAMA version), the original GREC files; types: the FIGER map
(``types/figer/types.map``) and the textent tables (dev + test; Freebase MID → FIGER types).

Each group is loaded as the corpus of its name (``fewrel``, ``trex``, ``google_re``, ``grec``): the dbt
var ``corpora`` builds the graph from some of them only.

Typing: Google-RE and GREC are linked to Freebase MIDs, so textent applies directly. FewRel and
T-REx are linked to Wikidata QIDs: their entities are typed by joining the entity name with textent's
Wikipedia titles (type_source ``textent_title``) and by spaCy NER labels (majority per entity,
type_source ``ner``; on by default, ``--no-ner-types`` turns it off). ``--ner-mentions`` also adds
the other named entities of each sentence (entity id = normalised name) — more instances per sentence.
GREC has no labels: names come from the Wikipedia URL of the evidence, textent titles and the
Google-RE labels of the same MIDs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from extract.batches.store import BatchSummary
from extract.loading import load_corpus, load_title_types, load_type_map, load_types
from extract.summary import database_summary, file_label
from extract.types import textent_names
from files.reading import json_lines
from warehouse.settings import shared_data_dir
from warehouse.target import Target

CORPUS_GROUPS = ("fewrel", "trex", "google_re", "grec")


@dataclass
class RealInputs:
    data: Path
    type_map: Path
    textent: list[Path]
    corpora: list[tuple[str, Path]] = field(default_factory=list)


def real_inputs(data_dir: Path | None = None, only: tuple[str, ...] = CORPUS_GROUPS) -> RealInputs:
    """The shared files to load; FileNotFoundError with a clear message when the folder is absent."""
    data = Path(data_dir) if data_dir else shared_data_dir()
    if not data.is_dir():
        raise FileNotFoundError(
            f"shared data folder not found: {data} — `sherliic-extract real` needs the shared real data "
            "(set SHERLIIC_DATA to its location)"
        )
    c = data / "corpora"
    corpora: list[tuple[str, Path]] = []
    if "fewrel" in only:
        corpora += [("fewrel", c / "fewrel" / f) for f in ("val_wiki.json", "val_nyt.json", "test_nyt.json")]
    if "trex" in only:
        corpora += [("trex", p) for p in sorted((c / "trex").glob("P*.jsonl"))]
    if "google_re" in only:
        corpora += [("google_re", p) for p in sorted((c / "google_re").glob("*.jsonl"))]
    if "grec" in only:
        corpora += [("grec", p) for p in sorted((c / "grec").glob("*.json"))]
    inputs = RealInputs(
        data,
        data / "types" / "figer" / "types.map",
        [data / "types" / "textent" / "dev.tsv", data / "types" / "textent" / "test.tsv"],
        corpora,
    )
    missing = [
        str(p) for p in [inputs.type_map, *inputs.textent, *(p for _, p in corpora)] if not p.is_file()
    ]
    if missing:
        raise FileNotFoundError(f"shared data incomplete, missing: {', '.join(missing)}")
    return inputs


def grec_names(inputs: RealInputs) -> dict[str, str]:
    """MID → name for GREC: textent titles, then the Google-RE labels of the same MIDs."""
    names = textent_names(inputs.textent)
    folder = inputs.data / "corpora" / "google_re"
    if folder.is_dir():
        for path in sorted(folder.glob("*.jsonl")):
            for _line, rec in json_lines(path):
                for key, label in (("sub", "sub_label"), ("obj", "obj_label")):
                    mid, name = rec.get(key), rec.get(label)
                    if isinstance(mid, str) and mid.startswith("/m/") and isinstance(name, str) and name:
                        names.setdefault(mid, name)
    return names


def run_real(
    target: Target,
    *,
    processes: int = 2,
    limit: int | None = None,
    ner_types: bool = True,
    ner_mentions: bool = False,
    replace: bool = False,
    only: tuple[str, ...] = CORPUS_GROUPS,
    data_dir: Path | None = None,
    out_dir: Path | None = None,
    on_batch: Callable[[BatchSummary], None] | None = None,
    progress_factory: Callable[[str], Callable[[int], None] | None] | None = None,
) -> dict:
    """Load the FIGER map, textent types, all shared corpora and the title-joined types; return the
    database summary (extract.summary.database_summary) plus the batch summaries."""
    inputs = real_inputs(data_dir, only)
    summaries: list[BatchSummary] = []

    def note(summary: BatchSummary) -> None:
        summaries.append(summary)
        if on_batch is not None:
            on_batch(summary)

    note(load_type_map(target, inputs.type_map, replace=replace))
    for path in inputs.textent:
        note(load_types(target, path, "textent", replace=replace))
    names = grec_names(inputs) if any(fmt == "grec" for fmt, _ in inputs.corpora) else {}
    for index, (fmt, path) in enumerate(inputs.corpora, start=1):
        options = {"names": names} if fmt == "grec" else {}
        label = file_label(index, len(inputs.corpora), path.name)
        progress = progress_factory(label) if progress_factory else None
        note(
            load_corpus(
                target,
                path,
                fmt,
                corpus=fmt,  # each group is one corpus: select them with the dbt var `corpora`
                replace=replace,
                processes=processes,
                ner_types=ner_types,
                ner_mentions=ner_mentions,
                limit=limit,
                reader_options=options,
                progress=progress,
            )
        )
    note(load_title_types(target, inputs.textent, out_dir=out_dir))
    result = database_summary(target)
    result["batches_run"] = [s.to_dict() for s in summaries]
    return result
