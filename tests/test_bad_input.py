"""Bad input and faults (issue #12): every failure is one `file:line: problem` line (exit 2, a `failed`
batch row, skippable with --skip-bad), nothing invalid is accepted silently, nothing is loaded twice.

Real embedded Postgres throughout; the CLIs run in-process (`main(argv)`) unless the test is about
the process itself (a database that cannot be reached, a file only another user cannot read).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from deppath.extraction import MAX_MENTIONS_PER_SENTENCE, SENTENCE_TOO_LONG, TOO_MANY_MENTIONS
from evaluation import catalog, datasets
from evaluation.evaluate import evaluate_baseline
from evaluation.registry import Context
from extract import cli
from extract.formats.documents import MAX_DOCUMENT_CHARS
from extract.loading import load_corpus
from extract.summary import database_summary
from files.reading import MAX_ID_BYTES, check_input_file
from files.spreadsheet import spreadsheet_safe, spreadsheet_unsafe, sql_spreadsheet_safe
from warehouse import server
from warehouse.errors import DatabaseUnavailable, InputError
from warehouse.target import Target

FORMATS = Path(__file__).parent / "fixtures" / "formats"
BENCH = Path(__file__).parent / "fixtures" / "benchmarks"
GOOD = FORMATS / "sample.jsonl"


def _extract(target: Target, capsys, *args: str) -> tuple[int, str]:
    """sherliic-extract in-process: (exit code, stderr with the console's line wrapping undone)."""
    code = cli.main(["--database-url", target.url(), "--quiet", *args])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def _batches(target: Target) -> list[tuple]:
    with target.connect() as conn:
        return conn.execute(
            "select status, n_bad_lines, options ->> 'error' from raw.load_batches order by batch_id"
        ).fetchall()


def _count(target: Target, table: str) -> int:
    with target.connect() as conn:
        return conn.execute(f"select count(*) from raw.{table}").fetchone()[0]


def _line(text: str, mentions: list[dict], doc_id: object = "d") -> str:
    return json.dumps({"id": doc_id, "text": text, "mentions": mentions})


OK_LINE = _line(
    "Jeff Bezos founded Amazon.",
    [{"start": 0, "end": 10, "entity": "Q1"}, {"start": 19, "end": 25, "entity": "Q2"}],
)


# -- 1. FACC1 without --docs-dir -----------------------------------------------------------------------
def test_facc1_without_docs_dir_reads_the_texts_next_to_the_annotations(fresh_target, capsys):
    code, err = _extract(
        fresh_target, capsys, "corpus", "--format", "facc1", str(FORMATS / "facc1_docs" / "annotations.tsv")
    )
    assert code == 0, err
    assert _batches(fresh_target)[0][0] == "loaded" and _count(fresh_target, "entities") > 0


# -- 2. a changed file at a loaded path -----------------------------------------------------------------
def test_changed_file_at_a_loaded_path_is_refused_not_duplicated(fresh_target, tmp_path, capsys):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(GOOD.read_bytes())
    assert _extract(fresh_target, capsys, "corpus", "--format", "jsonl", str(path))[0] == 0
    sentences = _count(fresh_target, "sentences")
    path.write_bytes(GOOD.read_bytes() + OK_LINE.encode() + b"\n")  # one line appended
    code, err = _extract(fresh_target, capsys, "corpus", "--format", "jsonl", str(path))
    assert code == 2 and len(_error_lines(err)) == 1
    assert "already loaded as batch" in err and "--replace" in err
    assert _count(fresh_target, "sentences") == sentences  # nothing loaded twice
    code, err = _extract(fresh_target, capsys, "corpus", "--format", "jsonl", "--replace", str(path))
    assert code == 0, err
    assert [s for s, _, _ in _batches(fresh_target)] == ["failed", "loaded"]
    assert _count(fresh_target, "sentences") == sentences + 1


# -- 4. benchmark items once per (dataset, split, item id) ---------------------------------------------
def test_two_benchmark_files_for_the_same_split_never_count_an_item_twice(fresh_target, tmp_path):
    dev = BENCH / "sherliic_dev_sample.tsv"
    datasets.load_benchmark(fresh_target, dev, "sherliic_tsv", show_progress=False)
    copy = tmp_path / "dev_copy.tsv"  # another file with the same items (one more line)
    copy.write_text(dev.read_text(encoding="utf-8").replace("\tyes\t", "\tno\t", 1), encoding="utf-8")
    with pytest.raises(InputError, match=r"item id\(s\) of sherliic/dev .* already loaded .* --replace"):
        datasets.load_benchmark(fresh_target, copy, "sherliic_tsv", show_progress=False)
    items = datasets.load_items(fresh_target)
    assert len(items) == 3 and items["item_id"].is_unique
    replaced = datasets.load_benchmark(fresh_target, copy, "sherliic_tsv", replace=True, show_progress=False)
    assert not replaced.skipped and replaced.n_items == 3
    items = datasets.load_items(fresh_target)
    assert len(items) == 3 and items["item_id"].is_unique and items.loc[0, "label"] == False  # noqa: E712
    # An evaluation given the same items twice still evaluates each item once.
    catalog.load_all()
    twice = datasets.items_frame([*datasets.read_benchmark(dev, "sherliic_tsv", show_progress=False)] * 2)
    rows = evaluate_baseline("Lemma", twice, Context(target=fresh_target), on_top_of_lemma=False).rows
    assert rows[0]["split"] == "dev" and rows[0]["n_items"] == 3


def _load_benchmark_in_process(target: Target, path: str, start, queue) -> None:
    from evaluation import datasets  # imported before the start signal: both loads begin together

    start.wait(60)
    try:
        summary = datasets.load_benchmark(target, path, "sherliic_tsv", show_progress=False)
        queue.put(("ok", summary.skipped))
    except Exception as exc:  # reported to the parent, which fails the test
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


def test_the_same_benchmark_file_loaded_twice_at_once(fresh_target):
    ctx = multiprocessing.get_context("spawn")
    start, queue = ctx.Event(), ctx.Queue()
    path = str(BENCH / "sherliic_dev_sample.tsv")
    workers = [
        ctx.Process(target=_load_benchmark_in_process, args=(fresh_target, path, start, queue))
        for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    time.sleep(3)  # let both import; correctness does not depend on it, only how often the race is hit
    start.set()
    for worker in workers:
        worker.join(300)
    results = sorted(queue.get(timeout=10) for _ in workers)
    assert results == [("ok", False), ("ok", True)]
    assert _count(fresh_target, "benchmark_items") == 3


# -- 5. tracebacks → file:line: problem ------------------------------------------------------------------
JSONL_CASES = {
    "nul_in_text": (_line("Bob\u0000 met Ann.", []), "text contains a NUL character at column 4"),
    "nul_in_id": (_line("Bob met Ann.", [], doc_id="a\u0000b"), "document id contains a NUL character"),
    "nul_in_entity": (
        _line("Bob met Ann.", [{"start": 0, "end": 3, "entity": "x\u0000"}]),
        "entity id contains a NUL character",
    ),
    "lone_surrogate": (_line("Bob \ud800 met Ann.", []), "text contains a lone surrogate U+D800"),
    "long_entity_id": (
        _line("Bob met Ann.", [{"start": 0, "end": 3, "entity": "Q" * 8000}]),
        f"entity id is 8,000 bytes long; identifiers are limited to {MAX_ID_BYTES} bytes",
    ),
    "empty_entity_id": (_line("Bob met Ann.", [{"start": 0, "end": 3, "entity": " "}]), "entity id is empty"),
    "bool_offset": (
        _line("Bob met Ann.", [{"start": False, "end": 3, "entity": "b"}]),
        "field 'start' must be int, got bool",
    ),
    "bool_entity": (
        _line("Bob met Ann.", [{"start": 0, "end": 3, "entity": True}]),
        "field 'entity' must be str, got bool",
    ),
    "name_not_a_string": (
        _line("Bob met Ann.", [{"start": 0, "end": 3, "entity": "b", "name": {"x": 1}}]),
        "field 'name' must be str, got dict",
    ),
    "too_long_document": (
        _line("word " * (MAX_DOCUMENT_CHARS // 5 + 1), []),
        "the parser's limit is 1,000,000",
    ),
}


@pytest.mark.parametrize("case", sorted(JSONL_CASES))
def test_bad_record_is_one_line_a_failed_batch_and_skippable(fresh_target, tmp_path, capsys, case):
    record, problem = JSONL_CASES[case]
    path = tmp_path / f"{case}.jsonl"
    path.write_text(OK_LINE + "\n" + record + "\n", encoding="utf-8")
    code, err = _extract(fresh_target, capsys, "corpus", "--format", "jsonl", str(path))
    (line,) = _error_lines(err)
    assert code == 2 and line.startswith(f"error: {path}:2: ") and problem in line
    assert _batches(fresh_target) == [("failed", 0, line.removeprefix("error: "))]
    assert _count(fresh_target, "sentences") == 0
    code, err = _extract(fresh_target, capsys, "corpus", "--format", "jsonl", "--skip-bad", str(path))
    assert code == 0, err
    assert _batches(fresh_target)[-1][:2] == ("loaded", 1) and _count(fresh_target, "sentences") == 1


def test_trex_non_string_fields_are_refused_not_stored_as_python_reprs(fresh_target, tmp_path, capsys):
    path = tmp_path / "trex.jsonl"
    fact = {
        "uuid": "u",
        "sub_uri": "Q1",
        "obj_uri": "Q2",
        "sub_label": {"en": "Alan Turing"},
        "evidences": [{"masked_sentence": "Alan Turing studied [MASK].", "obj_surface": "logic"}],
    }
    path.write_text(json.dumps(fact) + "\n", encoding="utf-8")
    code, err = _extract(fresh_target, capsys, "corpus", "--format", "trex", str(path))
    assert code == 2 and f"{path}:1: field 'sub_label' must be str, got dict" in err


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            b"/m/01\t/people/person\n/m/0\x002\t/people/person\n",
            ":2: line contains a NUL character at column 5",
        ),
        (b"/m/01\t/people/person\n/m/02\t/" + b"t" * 5000 + b"\n", ":2: type is 5,001 bytes long"),
        (b"/m/01\t/people/person\n\t/people/person\n", ":2: expected 'entity<TAB>type'"),
    ],
)
def test_bad_type_table_rows(fresh_target, tmp_path, capsys, content, problem):
    path = tmp_path / "types.tsv"
    path.write_bytes(content)
    code, err = _extract(fresh_target, capsys, "types", "--format", "tsv", str(path))
    assert code == 2 and f"{path}{problem}" in " ".join(err.split())
    assert _batches(fresh_target)[0][0] == "failed" and _count(fresh_target, "entity_types") == 0
    code, _ = _extract(fresh_target, capsys, "types", "--format", "tsv", "--skip-bad", str(path))
    assert code == 0 and _count(fresh_target, "entity_types") == 1


def test_files_that_are_not_readable_files(fresh_target, tmp_path, capsys):
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "gone.jsonl")
    cases = {
        folder: "is a directory, not a file",
        fifo: "is not a regular file",
        link: "broken symbolic link to",
        tmp_path / "missing.jsonl": "file not found",
    }
    for path, problem in cases.items():
        code, err = _extract(fresh_target, capsys, "corpus", "--format", "jsonl", str(path))
        assert code == 2 and _error_lines(err)[0].startswith(f"error: {path}: {problem}"), err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the check as another user")
def test_permission_denied_is_one_line(tmp_path):
    """root reads every file, so a forked child that became user `nobody` checks a file only root may
    read (the same check every loader runs before reading: files.reading.check_input_file)."""
    path = tmp_path / "secret.jsonl"
    path.write_text(OK_LINE + "\n")
    path.chmod(0o600)
    tmp_path.chmod(0o755)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        message = b"no error"
        try:
            os.setuid(65534)
            check_input_file(path)
        except InputError as exc:
            message = str(exc).encode()
        finally:
            os.write(write_end, message)
            os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    with os.fdopen(read_end, "rb") as pipe:
        assert pipe.read().decode() == f"{path}: cannot read the file: Permission denied"


def test_benchmark_files_bad_utf8_long_fields_missing_index(fresh_target, tmp_path):
    header = (BENCH / "sherliic_release_dev.csv").read_text(encoding="utf-8").splitlines()[0]
    row = (
        "0,18,101,8,102,region[B],{middle},military_combatant[A],,region[B],x,y,,True,True,a,b,yes,1,2,0.5,0"
    )
    bad_utf8 = tmp_path / "dev.csv"
    bad_utf8.write_bytes(f"{header}\n{row}\n".replace("{middle}", "is invaded by").encode() + b"1,\xff\n")
    with pytest.raises(InputError, match=r"dev.csv:3: not valid UTF-8"):
        datasets.load_benchmark(fresh_target, bad_utf8, "sherliic_csv", show_progress=False)
    long_field = tmp_path / "long_dev.csv"
    long_field.write_text(f"{header}\n" + row.replace("{middle}", '"' + "a" * 200_000 + '"') + "\n")
    with pytest.raises(InputError, match=r"long_dev.csv:2: malformed CSV: field larger than field limit"):
        datasets.load_benchmark(fresh_target, long_field, "sherliic_csv", show_progress=False)
    with pytest.raises(InputError, match=r"nowhere.tsv: file not found"):
        datasets.load_benchmark(
            fresh_target,
            BENCH / "sherliic_release_dev.csv",
            "sherliic_csv",
            relation_index=tmp_path / "nowhere.tsv",
            show_progress=False,
        )
    long_id = tmp_path / "long_id.tsv"
    lines = (BENCH / "sherliic_dev_sample.tsv").read_text(encoding="utf-8").splitlines()
    long_id.write_text("\n".join([lines[0], "x" * 3000 + lines[1][2:]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"long_id.tsv:2: item id is 3,000 bytes long"):
        datasets.load_benchmark(fresh_target, long_id, "sherliic_tsv", show_progress=False)
    with fresh_target.connect() as conn:
        statuses = conn.execute("select status from raw.load_batches").fetchall()
    # the missing index is found before any batch starts: no batch row for it
    assert statuses == [("failed",)] * 3 and _count(fresh_target, "benchmark_items") == 0


def test_annotation_results_with_nul_or_bom(fresh_target, tmp_path):
    from annotation.results import parse_results

    nul = tmp_path / "nul.csv"
    nul.write_bytes(b"item_id,worker_id,answer\ni1,w\x001,yes\n")
    with pytest.raises(InputError, match=r"nul.csv:2: line contains a NUL character"):
        parse_results(nul)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbfitem_id,worker_id,answer\ni1,w1,yes\n")
    (judgement,) = parse_results(bom)
    assert (judgement.item_id, judgement.worker_id, judgement.answer, judgement.line) == (
        "i1",
        "w1",
        "yes",
        2,
    )
    long_worker = tmp_path / "long.csv"
    long_worker.write_text("item_id,worker_id,answer\ni1," + "w" * 900 + ",yes\n")
    with pytest.raises(InputError, match=r"long.csv:2: worker_id is 900 bytes long"):
        parse_results(long_worker)


# -- 8. pathological input is bounded and counted ------------------------------------------------------
def test_trex_line_with_thousands_of_masks_is_bounded_and_counted(fresh_target, tmp_path):
    masked = "Turing was a British mathematician and " + " , ".join(["[MASK]"] * 5000) + " ."
    fact = {
        "uuid": "u",
        "sub_uri": "Q7251",
        "sub_label": "Alan Turing",
        "obj_uri": "Q8078",
        "obj_label": "logic",
        "evidences": [
            {"sub_surface": "Turing", "obj_surface": "logician", "masked_sentence": masked},
            {
                "sub_surface": "Jeff Bezos",
                "obj_surface": "Amazon",
                "masked_sentence": "Jeff Bezos founded [MASK] in 1994 .",
            },
        ],
    }
    path = tmp_path / "patho.jsonl"
    path.write_text(json.dumps(fact) + "\n", encoding="utf-8")
    summary = load_corpus(fresh_target, path, "trex")
    # 5,000 object mentions and one subject in a sentence of ~10,000 tokens: its 5,000 distinct-entity
    # pairs are counted, not walked; the ordinary evidence is extracted as usual.
    assert summary.rejections[SENTENCE_TOO_LONG] == 5000
    assert summary.counts["instances"] == 1


def test_many_mentions_in_a_short_sentence_are_bounded(fresh_target, tmp_path):
    words = [f"E{i}" for i in range(MAX_MENTIONS_PER_SENTENCE + 1)]
    text = "Alice met " + " and ".join(words) + "."
    mentions = [{"start": 0, "end": 5, "entity": "alice"}]
    for w in words:
        at = text.index(w + " ") if w != words[-1] else text.index(w + ".")
        mentions.append({"start": at, "end": at + len(w), "entity": w})
    path = tmp_path / "many.jsonl"
    path.write_text(_line(text, mentions) + "\n", encoding="utf-8")
    summary = load_corpus(fresh_target, path, "jsonl")
    n = len(mentions)
    assert summary.rejections == {TOO_MANY_MENTIONS: n * (n - 1) // 2}


# -- 9. database unreachable -----------------------------------------------------------------------------
CLIS = {
    "sherliic-extract": ["summary"],
    "sherliic-db": ["init"],
    "sherliic-dbt": ["run", "--select", "marts"],
    "sherliic-export": ["--out", "{tmp}/export"],
    "sherliic-baselines": ["all", "--no-load", "--out", "{tmp}/baselines"],
    "sherliic-annotate": ["import", "{tmp}/results.csv"],
    "sherliic-demo": ["--out", "{tmp}/demo"],
}


def _cli(name: str, args: list[str], env: dict[str, str | None]) -> subprocess.CompletedProcess:
    """A console script with `env` over this process's environment (None: the variable unset)."""
    merged = {**os.environ, **env}
    return subprocess.run(
        [str(Path(sys.executable).parent / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={key: value for key, value in merged.items() if value is not None},
    )


@pytest.mark.parametrize("name", sorted(CLIS))
def test_every_cli_says_in_one_line_that_the_database_cannot_be_reached(tmp_path, name):
    url = "postgresql://sherliic:s3cret@127.0.0.1:9/sherliic"  # port 9 (discard): nothing listens
    (tmp_path / "results.csv").write_text("item_id,worker_id,answer\ni1,w1,yes\n")
    args = [a.replace("{tmp}", str(tmp_path)) for a in CLIS[name]]
    result = _cli(name, args, {"DATABASE_URL": url})
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "s3cret" not in result.stderr + result.stdout
    (line,) = _error_lines(result.stderr)
    assert line.startswith(
        "error: cannot connect to the database at postgresql://sherliic:***@127.0.0.1:9/sherliic"
    )
    assert "sherliic-db start" in line


def test_unknown_database_and_unknown_role(db_target):
    db_url = db_target.url()
    for url, reason in (
        (
            urlparse(db_url)._replace(path="/no_such_database_here").geturl(),
            'database "no_such_database_here" does not exist',
        ),
        (
            db_url.replace(urlparse(db_url).netloc, "no_such_role@", 1),
            'role "no_such_role" does not exist',
        ),
    ):
        with pytest.raises(DatabaseUnavailable, match=reason):
            Target.postgres(url).connect()
    assert (
        server.redact("postgresql://u:pw@h/db?password=pw2") == "postgresql://u:***@h/db?password=%2A%2A%2A"
    )


def test_embedded_server_with_an_unusable_data_directory(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    result = _cli(
        "sherliic-db", ["start"], {"SHERLIIC_PGDATA": str(blocker / "sub" / "pgdata"), "DATABASE_URL": None}
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = _error_lines(result.stderr)
    assert "cannot create the embedded server's data directory" in line and "Not a directory" in line
    assert len(result.stderr) < 1000


# -- 10. silent acceptance -------------------------------------------------------------------------------
def test_bom_is_not_glued_to_the_first_word(fresh_target, tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffBarack Obama visited Paris in 2009.\n".encode())
    load_corpus(fresh_target, path, "text")
    with fresh_target.connect() as conn:
        entities = {r[0] for r in conn.execute("select entity_id from raw.entities")}
    assert "barack obama" in entities and not any("\ufeff" in e for e in entities)
    jsonl = tmp_path / "bom.jsonl"
    jsonl.write_bytes(b"\xef\xbb\xbf" + OK_LINE.encode() + b"\n")
    assert load_corpus(fresh_target, jsonl, "jsonl").counts["instances"] == 1


def test_facc1_nan_posterior_is_refused(fresh_target, tmp_path, capsys):
    docs = FORMATS / "facc1_docs"
    lines = (docs / "annotations.tsv").read_text(encoding="utf-8").splitlines()
    cols = lines[0].split("\t")
    cols[-2] = "nan"
    path = tmp_path / "annotations.tsv"
    path.write_text("\n".join([*lines[:1], "\t".join(cols)]) + "\n", encoding="utf-8")
    code, err = _extract(
        fresh_target, capsys, "corpus", "--format", "facc1", "--docs-dir", str(docs), str(path)
    )
    assert code == 2 and f"{path}:2: byte offsets must be integers and posteriors finite numbers" in err
    code, err = _extract(
        fresh_target, capsys, "corpus", "--format", "facc1", "--min-posterior", "nan", str(path)
    )
    assert code == 2 and "Invalid value for '--min-posterior': nan is not a finite number" in err


@pytest.mark.parametrize("codec", ["rot13", "base64", "no-such-codec"])
def test_facc1_encoding_that_is_not_a_text_encoding(fresh_target, tmp_path, capsys, codec):
    """rot13 and base64 are codecs Python knows, but they do not turn bytes into text."""
    docs = FORMATS / "facc1_docs"
    lines = (docs / "annotations.tsv").read_text(encoding="utf-8").splitlines()
    cols = lines[0].split("\t")
    cols[1] = codec
    path = tmp_path / "annotations.tsv"
    path.write_text("\t".join(cols) + "\n", encoding="utf-8")
    code, err = _extract(
        fresh_target, capsys, "corpus", "--format", "facc1", "--docs-dir", str(docs), str(path)
    )
    (line,) = _error_lines(err)
    assert code == 2 and line.startswith(f"error: {path}:1: unknown text encoding {codec!r}"), err
    assert _batches(fresh_target)[-1][0] == "failed"


# -- 11. multi-file loads, timestamps, spreadsheet formulas -----------------------------------------------
def test_multi_file_load_names_the_files_not_tried(fresh_target, tmp_path, capsys):
    first, bad, third = (tmp_path / f"{n}.jsonl" for n in ("first", "bad", "third"))
    first.write_text(OK_LINE + "\n")
    bad.write_text("{not json}\n")
    third.write_text(OK_LINE.replace('"d"', '"d3"') + "\n")
    code, err = _extract(
        fresh_target, capsys, "corpus", "--format", "jsonl", str(first), str(bad), str(third)
    )
    flat = " ".join(err.split())
    assert code == 2 and f"error: {bad}:1: malformed JSON" in flat
    assert "done before this error, kept (1): first.jsonl" in flat
    assert f"not tried after this error (1): {third}" in flat
    assert [s for s, _, _ in _batches(fresh_target)] == ["loaded", "failed"]


def test_finished_at_is_the_real_end_of_the_load(fresh_target, tmp_path):
    load_corpus(fresh_target, GOOD, "jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json}\n")
    with pytest.raises(InputError):
        load_corpus(fresh_target, bad, "jsonl")
    datasets.load_benchmark(
        fresh_target, BENCH / "sherliic_dev_sample.tsv", "sherliic_tsv", show_progress=False
    )
    with fresh_target.connect() as conn:
        rows = conn.execute(
            "select status, finished_at > started_at from raw.load_batches order by 1"
        ).fetchall()
    assert rows == [("failed", True), ("loaded", True), ("loaded", True)]


def test_spreadsheet_formulas_are_neutralised_in_text_for_people(db_target):
    for text in ("=HYPERLINK(1)", "+1", "-x", "@SUM(A1)", "\tx"):
        assert spreadsheet_safe(text) == "'" + text and spreadsheet_unsafe(spreadsheet_safe(text)) == text
    for text in ("Amazon", "nsubj^-___found___dobj", "'quoted", "a=b"):
        assert spreadsheet_safe(text) == text and spreadsheet_unsafe(text) == text
    with db_target.connect() as conn:
        rows = conn.execute(
            f"select {sql_spreadsheet_safe('t.x')} from (values ('=1+1'), ('-a'), ('@b'), ('ok'), "
            "(E'\\tx'), ('a-b')) as t(x)"
        ).fetchall()
    assert [r[0] for r in rows] == ["'=1+1", "'-a", "'@b", "ok", "'\tx", "a-b"]


# -- 7. a running load blocks nobody --------------------------------------------------------------------
def test_a_load_in_progress_blocks_neither_another_load_nor_the_summary(fresh_target, tmp_path, monkeypatch):
    """A load held open mid-COPY; meanwhile another file loads and the summary is read. lock_timeout
    turns any wait for a lock the open load holds into an error instead of a hang."""
    reached, release = threading.Event(), threading.Event()
    outcome: dict = {}

    def hold(_n: int) -> None:  # the progress callback: the first document pauses the load
        reached.set()
        release.wait(120)

    def first_load() -> None:
        try:
            outcome["first"] = load_corpus(fresh_target, GOOD, "jsonl", progress=hold)
        except Exception as exc:  # reported by the assertion below
            outcome["first"] = exc

    thread = threading.Thread(target=first_load)
    thread.start()
    try:
        assert reached.wait(120)
        monkeypatch.setenv("PGOPTIONS", "-c lock_timeout=5s")
        other = tmp_path / "other.jsonl"
        other.write_text(OK_LINE + "\n")
        second = load_corpus(fresh_target, other, "jsonl")
        summary = database_summary(fresh_target)
    finally:
        release.set()
        thread.join(120)
    assert not second.skipped and summary["batches"].get("corpus/loaded") == 1  # the first still open
    assert not isinstance(outcome["first"], Exception) and not outcome["first"].skipped
    assert [s for s, _, _ in _batches(fresh_target)] == ["loaded", "loaded"]
