"""Loading a parsed spaCy DocBin vs loading the same documents as text (python -m benchmarks.bench_docbin).

The same N documents (benchmarks.bench_extract.bench_documents: shared T-REx evidences, else generated
sentences) are written as jsonl and as a DocBin parsed by the project's pipeline (what a spaCy user
already holds; making it is not timed), then loaded with ``load_corpus`` into corpora of their own:
the text with 1 and 2 processes (spaCy parses it), the DocBin with its own parses (spaCy does not run).
Wall-clock seconds of the whole load (read, parse or rebuild, extract, COPY, commit), best of the
interleaved repeats; the loads are removed again (--database-url, DATABASE_URL, else the embedded
server). Writes out/bench/docbin.json and out/bench/docbin.md and prints them.
"""

from __future__ import annotations

import json
import tempfile
import time
import uuid
from pathlib import Path

import click

from benchmarks.bench_extract import bench_documents
from benchmarks.reports import write_report
from deppath.parsing import load_nlp
from deppath.records import Document
from extract.batches.store import open_batch_store
from extract.loading import load_corpus
from warehouse import command_line
from warehouse.command_line import CONTEXT, OUTPUT_FOLDER, target_options, version_option
from warehouse.settings import out_folder
from warehouse.target import Target


def write_inputs(docs: list[Document], folder: Path) -> tuple[Path, Path]:
    """The documents as a DocBin with the pipeline's parses and the mentions as linked entities (widened
    to whole tokens, overlaps dropped), and as jsonl with the same mentions."""
    from spacy.tokens import DocBin
    from spacy.util import filter_spans

    jsonl, docbin = folder / "docs.jsonl", folder / "docs.spacy"
    parsed = []
    with jsonl.open("w", encoding="utf-8") as handle:
        for doc, d in zip(load_nlp(ner=False).pipe(x.text for x in docs), docs, strict=True):
            spans = [
                doc.char_span(m.start, m.end, label="ENT", kb_id=m.entity_id, alignment_mode="expand")
                for m in d.mentions
            ]
            doc.ents = filter_spans([span for span in spans if span is not None])
            doc.user_data["id"] = d.document_id
            parsed.append(doc)
            mentions = [{"start": e.start_char, "end": e.end_char, "entity": e.kb_id_} for e in doc.ents]
            handle.write(json.dumps({"id": d.document_id, "text": d.text, "mentions": mentions}) + "\n")
    DocBin(store_user_data=True, docs=parsed).to_disk(docbin)
    return jsonl, docbin


def timed_load(target: Target, path: Path, fmt: str, processes: int) -> tuple[float, dict]:
    corpus = f"bench_{fmt}_{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    summary = load_corpus(target, path, fmt, corpus=corpus, processes=processes)
    seconds = time.perf_counter() - started
    with open_batch_store(target) as store:
        store.remove(corpora=[corpus])
    return seconds, summary.counts


def run(target: Target, n: int, repeats: int) -> dict:
    docs, source = bench_documents(n)
    with tempfile.TemporaryDirectory() as folder:
        jsonl, docbin = write_inputs(docs, Path(folder))
        load_nlp(ner=False)  # model loading is not measured (each load of text pays it once)
        runs = {"text_1": ("jsonl", jsonl, 1), "text_2": ("jsonl", jsonl, 2), "docbin": ("spacy", docbin, 1)}
        best: dict[str, float] = {}
        counts: dict[str, dict] = {}
        for _ in range(repeats):
            for name, (fmt, path, processes) in runs.items():
                seconds, counts[name] = timed_load(target, path, fmt, processes)
                best[name] = min(best.get(name, seconds), seconds)
        sizes = {"jsonl_bytes": jsonl.stat().st_size, "docbin_bytes": docbin.stat().st_size}
    result: dict = {
        "documents": len(docs),
        "source": source,
        **sizes,
        "note": "2 shared cores; best of repeats",
    }
    for name, seconds in best.items():
        result[name] = {
            "seconds": round(seconds, 2),
            "docs_per_s": round(len(docs) / seconds, 1),
            "instances": counts[name]["instances"],
        }
    result["speedup_vs_text_1"] = round(best["text_1"] / best["docbin"], 2)
    result["speedup_vs_text_2"] = round(best["text_2"] / best["docbin"], 2)
    return result


def markdown(result: dict) -> str:
    lines = [
        f"# Parsed DocBin vs text ({result['documents']} documents: {result['source']})",
        "",
        "| input | processes | seconds | docs/s | relation instances |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, label, processes in (
        ("text_1", "jsonl (spaCy parses)", 1),
        ("text_2", "jsonl (spaCy parses)", 2),
        ("docbin", "parsed DocBin (its parses)", 1),
    ):
        r = result[name]
        lines.append(f"| {label} | {processes} | {r['seconds']} | {r['docs_per_s']} | {r['instances']} |")
    lines += [
        "",
        f"Parsed DocBin: {result['speedup_vs_text_1']}× the speed of text with 1 process, "
        f"{result['speedup_vs_text_2']}× with 2; files: jsonl {result['jsonl_bytes']:,} bytes, DocBin "
        f"{result['docbin_bytes']:,} bytes. {result['note']}.",
    ]
    return "\n".join(lines) + "\n"


@click.command(context_settings=CONTEXT, help=__doc__.split("\n\n")[0])
@version_option
@click.option("--n", type=int, default=3000, show_default=True, help="Documents.")
@click.option("--repeats", type=int, default=2, show_default=True, help="Interleaved repeats, best of each.")
@click.option(
    "--out",
    type=OUTPUT_FOLDER,
    default=lambda: out_folder() / "bench",
    show_default="out/bench",
)
@target_options()
def cli(target: Target, n: int, repeats: int, out: Path) -> None:
    result = run(target, n, repeats)
    text = markdown(result)
    write_report(out, "docbin", result, text)
    print(text)


def main(argv: list[str] | None = None) -> int:
    return command_line.run(cli, argv, prog_name="python -m benchmarks.bench_docbin")


if __name__ == "__main__":
    raise SystemExit(main())
