"""Benchmark readers (hand-made fixtures in each published layout) and the transactional, idempotent
loader into raw.benchmark_items."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation import datasets
from extract.batches.store import open_batch_store
from warehouse.errors import InputError

FIX = Path(__file__).parent / "fixtures" / "benchmarks"
REGISTRY_COLUMNS = {
    "item_id",
    "dataset",
    "split",
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
    "label",
}


def test_release_csv_with_relation_index():
    items = datasets.read_benchmark(
        FIX / "sherliic_release_dev.csv", "sherliic_csv", relation_index=FIX / "relation_index.tsv"
    )
    assert [i["item_id"] for i in items] == ["0", "1", "2"]
    first, second, third = items
    assert first["split"] == "dev" and first["dataset"] == "sherliic"
    assert first["premise_path"] == "pobj^-___by___prep^-___invade___nsubjpass"
    assert (first["premise_type_a"], first["premise_type_b"]) == ("military_combatant", "region")
    assert first["is_premise_reversed"] is True and first["label"] is True
    assert first["premise_text"] == "region[B] is being invaded by military_combatant[A]"
    assert (second["hypothesis_type_a"], second["hypothesis_type_b"]) == ("region", "location")
    assert second["is_premise_reversed"] is False and second["is_hypothesis_reversed"] is True
    assert second["label"] is False and second["extra"]["num_disagr"] == "1"
    assert third["premise_text"] == "city[A] is country[B] 's capital"
    assert third["extra"]["examples_A"] == "Paris, the city / Rome"  # quoted comma


def test_release_csv_without_index_has_no_paths():
    items = datasets.read_benchmark(FIX / "sherliic_release_dev.csv", "sherliic_csv")
    assert all(i["premise_path"] is None for i in items)


def test_release_csv_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "dev.csv"
    lines = (FIX / "sherliic_release_dev.csv").read_text().splitlines()
    bad.write_text("\n".join([lines[0], lines[1], "3,1,2"]) + "\n")
    with pytest.raises(InputError, match=r"dev.csv:3: expected 22"):
        datasets.read_benchmark(bad, "sherliic_csv")
    bad.write_text("\n".join([lines[0], lines[1].replace(",yes,", ",maybe,")]) + "\n")
    with pytest.raises(InputError, match=r"dev.csv:2: label 'maybe'"):
        datasets.read_benchmark(bad, "sherliic_csv")


def test_sherliic_tsv_types_from_templates():
    items = datasets.read_benchmark(FIX / "sherliic_dev_sample.tsv", "sherliic_tsv")
    t0, t1, t2 = items
    assert (t0["premise_type_a"], t0["premise_type_b"]) == ("person", "organization")
    assert t0["premise_middle"] == "is leading"
    assert (t1["premise_type_a"], t1["premise_type_b"]) == ("person", "organization")  # B written first
    assert t1["is_premise_reversed"] is True and t1["is_hypothesis_reversed"] is False
    assert t2["premise_type_a"] is None and t2["extra"]["lm_split"] == "dev"
    assert [i["label"] for i in items] == [True, False, True]


def test_levy_holt_triples_are_parsed_into_paths():
    items = datasets.read_benchmark(FIX / "dirposi_symnegi" / "dev.txt", "levy_holt", show_progress=False)
    first, second = items
    assert first["dataset"] == "levy_holt/dirposi_symnegi" and first["split"] == "dev"
    assert first["extra"]["subset"] == "DirTrue" and second["extra"]["subset"] == "Unrelated"
    assert first["premise_path"] == "nsubjpass^-___indicate___prep___in___pobj___treatment___prep___of___pobj"
    assert first["hypothesis_path"] == "nsubj^-___kill___dobj"
    # the hypothesis names the arguments the other way round: its path still runs from A (Hitler)
    assert second["premise_path"] == "nsubj^-___march___prep___into___pobj"
    assert second["hypothesis_path"] == "pobj^-___by___prep^-___invade___nsubjpass"
    assert second["is_hypothesis_reversed"] is True


def test_levy_holt_bad_triple(tmp_path):
    bad = tmp_path / "dev.txt"
    bad.write_text("a,b,c\td,e,f\tTrue\tEN\na,b\tc,d,e\tFalse\tEN\n")
    with pytest.raises(InputError, match=r"dev.txt:2: triple 'a,b'"):
        datasets.read_benchmark(bad, "levy_holt")


def test_levy_holt_hosseini_layout(tmp_path):
    f = tmp_path / "dev_s.txt"
    f.write_text("Ephedrine,is used in,Medicine\tEphedrine,is widely used in,Medicine\tTrue\n")
    (item,) = datasets.read_benchmark(f, "levy_holt_hosseini", show_progress=False)
    assert (item["dataset"], item["split"], item["label"]) == ("levy_holt_hosseini", "dev", True)
    assert item["premise_text"] == "Ephedrine is widely used in Medicine"
    assert item["hypothesis_path"] == "nsubjpass^-___use___prep___in___pobj"


def test_zeichner_rule_applications():
    items = datasets.read_benchmark(FIX / "zeichner_sample.txt", "zeichner", show_progress=False)
    museum, acquire, kids = items
    assert museum["premise_path"] == "nsubj^-___open___prep___from___pobj"
    assert museum["hypothesis_path"] == "nsubj^-___open___prep___at___pobj"
    # @R@: "Y be acquired by X" -> path from A (Google, on the right) to B
    assert acquire["hypothesis_path"] == "pobj^-___by___prep^-___acquire___nsubjpass"
    assert kids["label"] is False and kids["extra"]["confidence"] == "0.6"


def test_load_is_transactional_and_idempotent(fresh_target, tmp_path):
    path = FIX / "sherliic_dev_sample.tsv"
    first = datasets.load_benchmark(fresh_target, path, "sherliic_tsv")
    assert (first.n_items, first.n_mapped, first.skipped) == (3, 3, False)
    again = datasets.load_benchmark(fresh_target, path, "sherliic_tsv")
    assert again.skipped and again.batch_id == first.batch_id and again.n_items == 3
    replaced = datasets.load_benchmark(fresh_target, path, "sherliic_tsv", replace=True)
    assert not replaced.skipped and replaced.batch_id != first.batch_id
    bad = tmp_path / "bad.tsv"
    bad.write_text(path.read_text() + "t3\tonly\tthree\n")
    with pytest.raises(InputError, match=r"bad.tsv:5"):
        datasets.load_benchmark(fresh_target, bad, "sherliic_tsv")
    with fresh_target.connect() as conn:
        n_items = conn.execute("select count(*) from raw.benchmark_items").fetchone()[0]
        batches = conn.execute(
            "select status, kind, n_rows from raw.load_batches order by batch_id"
        ).fetchall()
    # the bad file rolled back whole; its failure is recorded as a batch row without data
    assert n_items == 3 and batches == [("loaded", "benchmark", 3), ("failed", "benchmark", 0)]
    items = datasets.load_items(fresh_target)
    assert REGISTRY_COLUMNS <= set(items.columns)
    assert items["label"].tolist() == [True, False, True]
    assert items["is_premise_reversed"].dtype == bool
    assert items.loc[0, "extra"]["lm_split"] == "train"
    cov = datasets.warehouse_coverage(items, fresh_target)
    assert cov.to_dict("records") == [
        {"dataset": "sherliic", "split": "dev", "n_items": 3, "n_with_paths": 3, "n_in_warehouse": None}
    ]


def test_a_file_with_loaded_item_ids_is_refused_or_takes_their_batch_place(fresh_target, tmp_path):
    path = FIX / "sherliic_dev_sample.tsv"
    first = datasets.load_benchmark(fresh_target, path, "sherliic_tsv", show_progress=False)
    copy = tmp_path / "dev_copy.tsv"  # other bytes, the same three item ids
    copy.write_text(path.read_text().replace("Bezos is leading Amazon", "Bezos leads Amazon"))
    with pytest.raises(InputError, match=r"3 item id\(s\) of sherliic/dev .* already loaded .* --replace"):
        datasets.load_benchmark(fresh_target, copy, "sherliic_tsv", show_progress=False)
    replaced = datasets.load_benchmark(fresh_target, copy, "sherliic_tsv", replace=True, show_progress=False)
    assert not replaced.skipped and replaced.n_items == 3
    with open_batch_store(fresh_target) as store:
        batches = [(b["batch_id"], b["status"]) for b in store.batches(kind="benchmark")]
    # the refused load is a failed batch; the first file's batch went in the same transaction as the load
    assert (first.batch_id, "loaded") not in batches
    assert batches[-1] == (replaced.batch_id, "loaded") and [s for _, s in batches] == ["failed", "loaded"]
    items = datasets.load_items(fresh_target)
    assert len(items) == 3 and "Bezos leads Amazon" in set(items["premise_text"])


def test_warehouse_coverage_maps_through_canonical_paths(fresh_target):
    items = datasets.items_frame(datasets.read_benchmark(FIX / "sherliic_dev_sample.tsv", "sherliic_tsv"))
    with fresh_target.connect() as conn:
        conn.execute("create schema warehouse")
        conn.execute("create table warehouse.relations (rel_id int, path text)")
        # t0's two paths, and t1's: its premise is stored subject-left (reversed from SherLIiC's spelling)
        conn.execute(
            "insert into warehouse.relations values (1, 'nsubj^-___lead___dobj'),"
            " (2, 'nsubj^-___head___dobj'), (3, 'nsubjpass^-___found___prep___by___pobj'),"
            " (4, 'nsubj^-___own___dobj')"
        )
    cov = datasets.warehouse_coverage(items, fresh_target)
    assert cov.loc[0, "n_in_warehouse"] == 2
