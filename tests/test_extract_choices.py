"""`sherliic-extract corpus` as a newcomer meets it: a mistyped or mistaken format is named ("did you mean
spacy?", "looks like a spaCy DocBin"). Real spaCy, real Postgres."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deppath.parsing import load_nlp
from extract import cli
from warehouse.target import Target

GLOBEX = {
    "id": "d2",
    "text": "Acme acquired Globex in 2020.",
    "mentions": [{"start": 0, "end": 4, "entity": "acme"}, {"start": 14, "end": 20, "entity": "globex"}],
}


def _write(path: Path, *lines: dict | str) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", "utf-8")
    return path


def _extract(target: Target, capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--database-url", target.url(), "--quiet", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _batches(target: Target) -> list[tuple]:
    with target.connect() as conn:
        return conn.execute("select status, options from raw.load_batches order by batch_id").fetchall()


@pytest.mark.parametrize(
    ("command", "given", "meant"),
    [
        ("corpus", "docbin", "spacy"),
        ("corpus", "json", "jsonl"),
        ("corpus", "ndjson", "jsonl"),
        ("corpus", "jsnol", "jsonl"),
        ("corpus", "conll", "conllu"),
        ("types", "tvs", "tsv"),
    ],
)
def test_a_mistyped_format_suggests_the_one_meant(capsys, tmp_path, command, given, meant):
    code = cli.main([command, "--format", given, str(tmp_path / "x")])
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert (
        code == 2 and line.startswith("error: sherliic-extract") and line.endswith(f"did you mean {meant}?")
    )
    assert f"'{given}' is not one of" in line


def test_an_unknown_format_lists_the_formats_without_a_guess(capsys, tmp_path):
    assert cli.main(["corpus", "--format", "xml", str(tmp_path / "x")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "'xml' is not one of 'conllu'," in line and "did you mean" not in line


def test_a_docbin_given_as_jsonl_and_json_given_as_spacy_name_the_format(fresh_target, capsys, tmp_path):
    from spacy.tokens import DocBin

    docbin = tmp_path / "acq.spacy"
    DocBin(docs=[load_nlp(ner=False)(GLOBEX["text"])]).to_disk(docbin)
    code, _, err = _extract(fresh_target, capsys, "corpus", "--format", "jsonl", str(docbin))
    assert code == 2 and "Traceback" not in err
    assert err.splitlines() == [
        f"error: {docbin}: looks like a spaCy DocBin (a binary .spacy file), not jsonl: use --format spacy"
    ]
    jsonl = _write(tmp_path / "acq.jsonl", GLOBEX)
    code, _, err = _extract(fresh_target, capsys, "corpus", "--format", "spacy", str(jsonl))
    assert code == 2
    assert err.splitlines() == [
        f"error: {jsonl}: looks like JSON text, not a spaCy DocBin: use --format jsonl (the project's JSON "
        "lines), fewrel or trex"
    ]
    plain = tmp_path / "notes.txt"
    plain.write_text("Acme acquired Globex.\n", encoding="utf-8")
    code, _, err = _extract(fresh_target, capsys, "corpus", "--format", "spacy", str(plain))
    assert code == 2 and "looks like text, not a spaCy DocBin" in err
    # each a failed batch that keeps the message, nothing loaded; the right format then loads
    assert [status for status, _ in _batches(fresh_target)] == ["failed"] * 3
    assert _extract(fresh_target, capsys, "corpus", "--format", "spacy", str(docbin))[0] == 0
