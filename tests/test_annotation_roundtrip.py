"""Annotation round trip: sample InfCands, export the crowdsourcing CSV, import results (good and bad),
aggregate in SQL (trust, gold, re-queue, split, Table 2), export the 22-column SherLIiC CSVs."""

from __future__ import annotations

import csv
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from test_annotation_helpers import CANDIDATES, make_warehouse

from annotation.cli import main as cli_main
from annotation.dataset import SHERLIIC_COLUMNS, aggregate, export_dataset, statistics
from annotation.results import import_results
from annotation.sampling import export_batch_csv, sample_batch
from annotation.server import make_server, serve_in_thread
from warehouse.errors import InputError
from warehouse.settings import PROJECT_ROOT
from warehouse.target import Target


def _items(target: Target, batch: str) -> list[tuple]:
    with target.connect() as conn:
        return conn.execute(
            "select item_id, premise_path, hypothesis_path, alignment, premise_text, hypothesis_text, "
            "stratum "
            "from raw.annotation_items where batch_name = %s order by item_id",
            (batch,),
        ).fetchall()


def _n_judgements(target: Target) -> int:
    with target.connect() as conn:
        return conn.execute("select count(*) from raw.annotation_judgements").fetchone()[0]


def _write(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


@pytest.fixture()
def sampled(fresh_target: Target) -> Target:
    make_warehouse(fresh_target)
    summary = sample_batch(fresh_target, "b1", 3, hypotheses_per_premise=2, seed=7)
    assert summary.n_premises == 3
    return fresh_target


def test_sampling_is_reproducible_and_stratified(make_target) -> None:
    targets = [make_target(), make_target(), make_target()]
    for target in targets:
        make_warehouse(target)
    for target in targets[:2]:
        sample_batch(target, "b", 3, hypotheses_per_premise=2, seed=11)
    assert _items(targets[0], "b") == _items(targets[1], "b")  # same seed, same batch
    # the fixture has premises that are only 'crossed' (trade) and only 'straight' (invade, leader):
    # stratified sampling of two premises takes one of each stratum, whatever the seed
    for seed in (1, 2, 3):
        sample_batch(targets[2], f"s{seed}", 2, hypotheses_per_premise=1, seed=seed, stratify_by="alignment")
        assert sorted(row[6] for row in _items(targets[2], f"s{seed}")) == ["crossed", "straight"]
        with targets[2].connect() as conn:
            conn.execute("delete from raw.annotation_batches where batch_name = %s", (f"s{seed}",))
    sample_batch(targets[2], "all", 100, hypotheses_per_premise=100)
    assert len(_items(targets[2], "all")) == len(CANDIDATES)
    with pytest.raises(ValueError, match="no inference candidates left"):
        sample_batch(targets[2], "none", 1)
    sample_batch(targets[0], "c", 4, hypotheses_per_premise=1, seed=11, stratify_by="alignment")
    # a candidate is never sampled twice: batch c avoided batch b's candidates
    b_pairs = {row[1:4] for row in _items(targets[0], "b")}
    assert not b_pairs & {row[1:4] for row in _items(targets[0], "c")}
    with pytest.raises(ValueError, match="exists already"):
        sample_batch(targets[0], "c", 1)


def test_rendered_items_and_crowdsourcing_csv(sampled: Target, tmp_path: Path) -> None:
    items = _items(sampled, "b1")
    assert 3 <= len(items) <= 6
    texts = {(row[1], row[2], row[3]): (row[4], row[5]) for row in items}
    crossed = ("nsubj^-___grant___prep___to___pobj", "nsubj^-___receive___prep___from___pobj", "crossed")
    if crossed in texts:
        assert texts[crossed] == (
            "organization[A] is granting to person[B]",
            "person[B] is receiving from organization[A]",
        )
    out = tmp_path / "batch.csv"
    n_rows = export_batch_csv(sampled, "b1", out)
    rows = list(csv.DictReader(out.open()))
    assert n_rows == len(rows) == 3
    assert {
        "premise",
        "examples",
        "hypothesis_1_id",
        "hypothesis_1",
        "hypothesis_2_id",
        "answer_options",
    } <= set(rows[0])
    assert all(row["premise"] and row["hypothesis_1"] for row in rows)
    assert all(row["examples"].startswith("A: ") for row in rows)  # example entities from the TEG
    exported_ids = {row[f"hypothesis_{i}_id"] for row in rows for i in (1, 2)} - {""}
    assert exported_ids == {row[0] for row in items}


def test_bad_results_files_are_rejected_whole(sampled: Target, tmp_path: Path) -> None:
    ids = [row[0] for row in _items(sampled, "b1")]
    header = ["item_id", "worker_id", "answer"]
    cases = {
        "unknown item id 'nope'": [header, [ids[0], "w1", "yes"], ["nope", "w1", "no"]],
        "duplicate judgement": [header, [ids[0], "w1", "yes"], [ids[1], "w1", "no"], [ids[0], "w1", "no"]],
        "malformed row": [header, [ids[0], "w1", "yes"], [ids[1], "w1"]],
        "is not one of yes, no, incomprehensible": [header, [ids[0], "w1", "maybe"]],
        "header lacks column(s) answer": [["item_id", "worker_id"], [ids[0], "w1"]],
    }
    for problem, rows in cases.items():
        path = _write(tmp_path / "bad.csv", rows)
        with pytest.raises(InputError, match=problem.replace("(", r"\(").replace(")", r"\)")) as info:
            import_results(sampled, path)
        assert info.value.file == str(path) and info.value.line is not None, problem
        assert _n_judgements(sampled) == 0, f"{problem}: nothing may be half-imported"
    # a judgement that conflicts with one already stored is rejected as well
    good = _write(tmp_path / "good.csv", [header, [ids[0], "w1", "yes"]])
    assert import_results(sampled, good) == 1
    assert import_results(sampled, good) == 0  # re-importing the same file is a no-op
    other = _write(tmp_path / "other.csv", [header, [ids[1], "w1", "no"], [ids[0], "w1", "no"]])
    with pytest.raises(InputError, match="other.csv:3: duplicate judgement"):
        import_results(sampled, other)
    assert _n_judgements(sampled) == 1


def test_cli_reports_bad_input_with_file_and_line(
    sampled: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", sampled.url())
    bad = _write(tmp_path / "results.csv", [["item_id", "worker_id", "answer"], ["nope", "w1", "yes"]])
    assert cli_main(["import", str(bad)]) == 2
    assert f"{bad}:2: unknown item id 'nope'" in capsys.readouterr().err
    assert _n_judgements(sampled) == 0
    assert cli_main(["export", "--batch", "b1", "--out", str(tmp_path / "b1.csv")]) == 0
    assert (tmp_path / "b1.csv").exists()
    assert cli_main(["render", "nsubj^-___grant___prep___to___pobj", "orgf", "empl"]) == 0
    assert capsys.readouterr().out.strip().endswith("orgf[A] is granting to empl[B]")


def _judge(ids: list[str], answers: dict[str, list[str]]) -> list[list[str]]:
    rows = [["item_id", "worker_id", "answer"]]
    for worker, worker_answers in answers.items():
        rows += [[item, worker, answer] for item, answer in zip(ids, worker_answers, strict=True)]
    return rows


def test_aggregation_gold_trust_split_and_export(sampled: Target, tmp_path: Path) -> None:
    ids = [row[0] for row in _items(sampled, "b1")]
    n = len(ids)
    gold = ["yes" if i % 2 == 0 else "no" for i in range(n)]
    flip = {"yes": "no", "no": "yes"}
    answers = {
        "w1": gold,
        "w2": gold,
        "w3": gold,
        "w4": [flip[g] if i == 0 else g for i, g in enumerate(gold)],  # one dissent -> trust (n-1)/n
        "bad": [flip[g] for g in gold],  # always against the majority -> trust 0, excluded
    }
    answers["w3"] = ["incomprehensible"] + gold[1:]  # item 0 flagged incomprehensible -> excluded
    import_results(sampled, _write(tmp_path / "results.csv", _judge(ids, answers)))
    aggregate(sampled, target_path=tmp_path / "dbt")
    with sampled.connect() as conn:
        trust = dict(
            conn.execute("select worker_id, is_trusted from warehouse.annotation_worker_trust").fetchall()
        )
        labels = {
            r[0]: r[1:]
            for r in conn.execute(
                "select item_id, status, gold_label, num_disagr, n_missing "
                "from warehouse.annotation_item_labels"
            ).fetchall()
        }
    assert trust == {"w1": True, "w2": True, "w3": True, "w4": True, "bad": False}
    assert labels[ids[0]][0] == "incomprehensible"
    for item in ids[1:]:
        # 4 trusted yes/no judgements after excluding `bad`: the item is re-queued for one more
        assert labels[item] == ("requeue", None, None, 1), item
    # the replacement judgement arrives -> gold, unanimous
    import_results(sampled, _write(tmp_path / "more.csv", _judge(ids[1:], {"w5": gold[1:]})))
    aggregate(sampled, target_path=tmp_path / "dbt")
    with sampled.connect() as conn:
        labels = {
            r[0]: r[1:]
            for r in conn.execute(
                "select item_id, status, gold_label, num_disagr from warehouse.annotation_item_labels"
            ).fetchall()
        }
        split = dict(conn.execute("select item_id, split from warehouse.annotation_split").fetchall())
    for i, item in enumerate(ids[1:], start=1):
        assert labels[item] == ("gold", gold[i], 0), item
    assert set(split) == set(ids[1:])
    stats = {(r["split"], r["statistic"]): r["value"] for r in statistics(sampled)}
    assert stats[("all", "n_items")] == n - 1
    assert stats[("all", "n_workers_excluded")] == 1
    assert stats[("all", "n_excluded_incomprehensible")] == 1
    assert stats[("all", "n_yes")] + stats[("all", "n_no")] == n - 1
    assert stats.get(("dev", "n_items"), 0) + stats[("test", "n_items")] == n - 1
    with sampled.connect() as conn:  # the ad-hoc queries in sql/ run on the marts
        for query in sorted((PROJECT_ROOT / "sql").glob("annotation*.sql")):
            conn.execute(query.read_text()).fetchall()
        table2 = conn.execute((PROJECT_ROOT / "sql" / "annotation_table2.sql").read_text()).fetchall()
    assert table2[0][:3] == ("sherliic", "all", n - 1)
    counts = export_dataset(sampled, tmp_path / "dataset")
    assert counts["dev"] + counts["test"] == n - 1
    rows = list(csv.reader((tmp_path / "dataset" / "test.csv").open()))
    assert rows[0] == SHERLIIC_COLUMNS and len(SHERLIIC_COLUMNS) == 22
    record = dict(zip(rows[0], rows[1], strict=True))
    assert record["gold_label"] in ("yes", "no") and record["num_disagr"] == "0"
    assert record["is_prem_reversed"] == "False" and record["examples_A"].startswith("[")


def test_zeichner_two_step_import(fresh_target: Target, tmp_path: Path) -> None:
    make_warehouse(fresh_target)
    sample_batch(fresh_target, "z", 2, hypotheses_per_premise=1, task="zeichner")
    ids = [row[0] for row in _items(fresh_target, "z")]
    header = ["item_id", "worker_id", "premise_meaningful", "hypothesis_meaningful", "answer"]
    path = _write(
        tmp_path / "z.csv", [header, [ids[0], "w1", "yes", "yes", "yes"], [ids[1], "w1", "yes", "no", ""]]
    )
    assert import_results(fresh_target, path, task="zeichner") == 2
    with fresh_target.connect() as conn:
        answers = dict(conn.execute("select item_id, answer from raw.annotation_judgements").fetchall())
    assert answers == {ids[0]: "yes", ids[1]: "incomprehensible"}
    bad = _write(tmp_path / "zbad.csv", [header, [ids[0], "w2", "yes", "yes", ""]])
    with pytest.raises(InputError, match="zbad.csv:2: .*entailment answer must be yes or no"):
        import_results(fresh_target, bad, task="zeichner")


def test_annotation_page_over_http(sampled: Target) -> None:
    """The page's protocol without a browser (the browser test is tests/test_annotation_browser.py)."""
    server = make_server(sampled, port=0, judgements_per_item=1)
    serve_in_thread(server)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        page = urllib.request.urlopen(f"{base}/?worker=w9&task=sherliic").read().decode()
        assert "Fact:" in page and "incomprehensible" in page
        ids = [
            line.split("value='")[1].split("'")[0] for line in page.split("<input") if "name='item'" in line
        ]
        assert ids
        token = page.split("name='token' value='")[1].split("'")[0]
        incomplete = urllib.parse.urlencode(
            {"token": token, "worker": "w9", "task": "sherliic", "item": ids[0]}
        ).encode()
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"{base}/submit", data=incomplete)
        assert info.value.code == 400
        assert _n_judgements(sampled) == 0
        form = [("token", token), ("worker", "w9"), ("task", "sherliic"), ("batch", "")]
        form += [("item", i) for i in ids] + [(f"answer_{i}", "yes") for i in ids]
        urllib.request.urlopen(f"{base}/submit", data=urllib.parse.urlencode(form).encode()).read()
        assert _n_judgements(sampled) == len(ids)
        # Zeichner's two steps: meaningful? (both sides), then entailment
        sample_batch(sampled, "zb", 1, hypotheses_per_premise=1, task="zeichner")
        page = urllib.request.urlopen(f"{base}/?worker=w9&task=zeichner").read().decode()
        assert "meaningful sentence?" in page
        (zid,) = [
            line.split("value='")[1].split("'")[0] for line in page.split("<input") if "name='item'" in line
        ]
        form = [
            ("token", token),
            ("worker", "w9"),
            ("task", "zeichner"),
            ("item", zid),
            (f"pm_{zid}", "yes"),
            (f"hm_{zid}", "no"),
        ]
        urllib.request.urlopen(f"{base}/submit", data=urllib.parse.urlencode(form).encode()).read()
        with sampled.connect() as conn:
            stored = conn.execute(
                "select answer, premise_meaningful, hypothesis_meaningful from raw.annotation_judgements "
                "where task = 'zeichner'"
            ).fetchall()
        assert stored == [("incomprehensible", True, False)]
    finally:
        server.shutdown()
        server.server_close()
