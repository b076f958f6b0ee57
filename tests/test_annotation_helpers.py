"""Shared fixture data for the annotation tests: a tiny warehouse (the dbt marts' columns that
sampling reads) written straight into a throwaway database, so the annotation round trip is tested
independently of the TEG build. Imported by tests/test_annotation_*.py."""

from __future__ import annotations

from warehouse.target import Target

# (premise path, premise types, hypothesis path, hypothesis types, alignment, score)
CANDIDATES = [
    (
        "nsubj^-___grant___prep___to___pobj",
        ("organization", "person"),
        "nsubj^-___give___prep___to___pobj",
        ("organization", "person"),
        "straight",
        90.0,
    ),
    (
        "nsubj^-___grant___prep___to___pobj",
        ("organization", "person"),
        "nsubj^-___employ___dobj",
        ("organization", "person"),
        "straight",
        80.0,
    ),
    (
        "nsubj^-___grant___prep___to___pobj",
        ("organization", "person"),
        "nsubj^-___receive___prep___from___pobj",
        ("person", "organization"),
        "crossed",
        70.0,
    ),
    (
        "nsubj^-___seek___prep___from___pobj",
        ("person", "organization"),
        "nsubj^-___give___prep___to___pobj",
        ("organization", "person"),
        "crossed",
        60.0,
    ),
    (
        "nsubj^-___seek___prep___from___pobj",
        ("person", "organization"),
        "nsubj^-___ask___dobj",
        ("person", "organization"),
        "straight",
        50.0,
    ),
    (
        "nsubjpass^-___invade___prep___by___pobj",
        ("location", "thing"),
        "nsubjpass^-___occupy___prep___by___pobj",
        ("location", "thing"),
        "straight",
        40.0,
    ),
    (
        "nsubj^-___leader___poss",
        ("person", "location"),
        "nsubj^-___lead___dobj",
        ("person", "location"),
        "straight",
        30.0,
    ),
    (
        "nsubj^-___trade___prep___with___pobj",
        ("location", "location"),
        "nsubj^-___fear___dobj",
        ("location", "location"),
        "crossed",
        20.0,
    ),
]
ENTITIES = ["Google", "Microsoft", "Larry Page", "Bill Gates", "Russia", "Cuba", "Napoleon", "Spain"]


def make_warehouse(target: Target) -> None:
    """Create warehouse.inference_candidates / typed_relations / teg_edges / entities with CANDIDATES."""
    with target.connect() as conn:
        conn.execute("create schema if not exists warehouse")
        conn.execute(
            """
            create table warehouse.inference_candidates (
                premise_typed_rel_id bigint, hypothesis_typed_rel_id bigint, alignment text,
                premise_rel_id bigint, hypothesis_rel_id bigint,
                premise_path text, hypothesis_path text,
                premise_type_a text, premise_type_b text, hypothesis_type_a text, hypothesis_type_b text,
                premise_tsg_index integer, hypothesis_tsg_index integer,
                relv double precision, sigma double precision, esr double precision,
                score double precision, rank_for_hypothesis integer
            )
            """
        )
        conn.execute("create table warehouse.entities (entity_id bigint, entity_name text)")
        conn.execute(
            "create table warehouse.teg_edges (typed_rel_id bigint, rel_id bigint, arg1_entity_id bigint, "
            "arg2_entity_id bigint, n_instances bigint)"
        )
        typed: dict[tuple, int] = {}
        rels: dict[str, int] = {}
        for prem, ptypes, hypo, htypes, alignment, score in CANDIDATES:
            for path, types in ((prem, ptypes), (hypo, htypes)):
                rels.setdefault(path, len(rels) + 1)
                typed.setdefault((path, types), len(typed) + 1)
            conn.execute(
                "insert into warehouse.inference_candidates values "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 0, 1, %s, %s, 0.75, %s, 1)",
                (
                    typed[(prem, ptypes)],
                    typed[(hypo, htypes)],
                    alignment,
                    rels[prem],
                    rels[hypo],
                    prem,
                    hypo,
                    *ptypes,
                    *htypes,
                    score * 100,
                    score / 2,
                    score,
                ),
            )
        for i, name in enumerate(ENTITIES, start=1):
            conn.execute("insert into warehouse.entities values (%s, %s)", (i, name))
        for (path, _types), typed_id in typed.items():
            for k in range(3):  # three member pairs per typed relation, decreasing counts
                conn.execute(
                    "insert into warehouse.teg_edges values (%s, %s, %s, %s, %s)",
                    (typed_id, rels[path], 1 + (typed_id + k) % 4, 5 + (typed_id + k) % 4, 10 - k),
                )
        conn.commit()
