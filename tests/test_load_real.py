"""The shared-data run (extract/real.py) on a small slice, and the textent title join for QID entities."""

from __future__ import annotations

import json

import pytest

from extract.loading import load_corpus, load_title_types
from extract.real import real_inputs, run_real


def test_real_inputs_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="SHERLIIC_DATA"):
        real_inputs(tmp_path / "nope")


def test_real_run_slice(shared_data, fresh_target, tmp_path):
    kwargs = {
        "processes": 1,
        "limit": 15,
        "only": ("google_re", "grec"),
        "data_dir": shared_data,
        "out_dir": tmp_path,
    }
    result = run_real(fresh_target, **kwargs)
    kinds = [(b["kind"], b["source_format"]) for b in result["batches_run"]]
    assert kinds[:3] == [("type_map", "figer_map"), ("types", "textent"), ("types", "textent")]
    assert kinds.count(("corpus", "google_re")) == 3 and kinds.count(("corpus", "grec")) == 3
    assert result["documents"] == 6 * 15 and result["paths_kept"] > 0
    assert result["tables"]["type_mappings"] == 565
    assert 0 < result["typed_share"] <= 1 and result["typed_entities_by_source"]["figer"] > 90_000
    again = run_real(fresh_target, **kwargs)
    assert all(b["skipped"] for b in again["batches_run"])  # idempotent: nothing reloaded
    assert again["paths_kept"] == result["paths_kept"]


def test_title_types_for_qid_entities(fresh_target, tmp_path):
    corpus = tmp_path / "qid.jsonl"
    corpus.write_text(
        json.dumps(
            {
                "id": "a",
                "text": "Hixton, Wisconsin is near Mercury.",
                "mentions": [
                    {"start": 0, "end": 17, "entity": "Q1", "name": "Hixton, Wisconsin"},
                    {"start": 26, "end": 33, "entity": "Q2"},
                ],
            }
        )
        + "\n"
    )
    load_corpus(fresh_target, corpus, "jsonl")
    textent = tmp_path / "textent.tsv"
    textent.write_text(
        "freebase_id\twikipedia_title\ttypes\n/m/01ml93\tHixton, Wisconsin\tlocation-city,location\n"
    )
    s = load_title_types(fresh_target, [textent], out_dir=tmp_path)
    assert s.counts == {"rows": 2, "typed_entities": 1, "candidates": 2}
    assert load_title_types(fresh_target, [textent], out_dir=tmp_path).skipped
    corpus2 = tmp_path / "qid2.jsonl"
    corpus2.write_text(
        json.dumps(
            {
                "id": "b",
                "text": "Hillsborough is small.",
                "mentions": [{"start": 0, "end": 12, "entity": "Q3", "name": "Hixton, Wisconsin"}],
            }
        )
        + "\n"
    )
    load_corpus(fresh_target, corpus2, "jsonl")
    newer = load_title_types(fresh_target, [textent], out_dir=tmp_path)
    assert newer.replaced_batches == [s.batch_id] and newer.counts["typed_entities"] == 2
    with fresh_target.connect() as conn:
        rows = sorted(conn.execute("select entity_id, type_name, type_source from raw.entity_types"))
    assert rows[:2] == [("Q1", "/location", "textent_title"), ("Q1", "/location/city", "textent_title")]
    assert len(rows) == 4  # the superseded batch is gone
