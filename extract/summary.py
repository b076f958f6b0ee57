"""What is in the raw schema: counts per table and per corpus, rejections per rule, the typed-entity
share (`sherliic-extract summary`), on either engine (the Target's)."""

from __future__ import annotations

from warehouse.target import Target

# sentences parsed by a corpus load: a number in the batch's options (Postgres jsonb, Spark JSON text)
SENTENCES_PARSED = {
    "postgres": "(options -> 'reader_stats' ->> 'sentences_parsed')::bigint",
    "spark": "cast(get_json_object(options, '$.reader_stats.sentences_parsed') as bigint)",
}

# the parsers that made a corpus's paths (batch option `parser`, recorded since loads record it)
PARSERS = {
    "postgres": "coalesce(string_agg(distinct options ->> 'parser', ', '), '')",
    "spark": "concat_ws(', ', array_sort(collect_set(get_json_object(options, '$.parser'))))",
}


def database_summary(target: Target) -> dict:
    """Counts per raw table (loaded batches only), rejections per rule, and the typed-entity share.

    typed share = entities of corpus batches with at least one type (any loaded type batch or inline
    type) / all such entities; also given for the entities that occur in relation instances.
    Read from the Target's raw schema (on Postgres created first if missing).
    """
    target.ensure_schema()
    with target.marts() as marts:

        def one(query: str) -> int:
            return int(marts.one(query)[0] or 0)

        loaded = "batch_id in (select batch_id from raw.load_batches where status = 'loaded')"
        tables = {
            t: one(f"select count(*) from raw.{t} where {loaded}")  # noqa: S608 - fixed table names
            for t in (
                "sentences",
                "entities",
                "entity_types",
                "type_mappings",
                "relation_instances",
                "path_rejections",
            )
        }
        batches = {
            f"{kind}/{status}": n
            for kind, status, n in marts.rows(
                "select kind, status, count(*) from raw.load_batches group by 1, 2 order by 1, 2"
            )
        }
        corpora = {
            name: {"batches": int(b), "documents": int(d), "instances": int(i), "parsers": parsers or ""}
            for name, b, d, i, parsers in marts.rows(
                "select corpus_name, count(*), sum(n_documents), sum(n_instances), "
                f"{PARSERS[marts.engine]} from raw.load_batches "
                "where status = 'loaded' and kind = 'corpus' group by 1 order by 1"
            )
        }
        documents, mentions, parsed = marts.one(
            "select coalesce(sum(n_documents), 0), coalesce(sum(n_mentions), 0), "
            f"coalesce(sum({SENTENCES_PARSED[marts.engine]}), 0) "
            "from raw.load_batches "
            "where status = 'loaded' and kind = 'corpus'"
        )
        rejections = {
            rule: int(n)
            for rule, n in marts.rows(
                f"select rule, sum(n_paths) from raw.path_rejections where {loaded} "
                "group by rule order by rule"
            )
        }
        typed_sql = (
            "with ents as ({ents}), "
            "typed as (select distinct entity_id from raw.entity_types where {loaded}) "
            "select count(*), count(t.entity_id) from ents e left join typed t using (entity_id)"
        )
        all_entities = typed_sql.format(
            ents=f"select distinct entity_id from raw.entities where {loaded}", loaded=loaded
        )
        graph_entities = typed_sql.format(
            ents=f"select arg1_entity_id as entity_id from raw.relation_instances where {loaded} union "
            f"select arg2_entity_id from raw.relation_instances where {loaded}",
            loaded=loaded,
        )
        n_ent, n_typed = marts.one(all_entities)
        n_graph, n_graph_typed = marts.one(graph_entities)
        relations = one(f"select count(distinct path) from raw.relation_instances where {loaded}")
        relations_5 = one(
            "select count(*) from (select path from (select distinct path, arg1_entity_id, arg2_entity_id "
            f"from raw.relation_instances where {loaded}) as pairs group by path having count(*) >= 5) as r"
        )
        by_source = {
            source: int(n)
            for source, n in marts.rows(
                f"select type_source, count(distinct entity_id) from raw.entity_types where {loaded} "
                "group by 1 order by 1"
            )
        }
    kept = tables["relation_instances"]
    rejected = sum(rejections.values())
    return {
        "batches": batches,
        "corpora": corpora,
        "tables": tables,
        "documents": int(documents),
        "sentences_parsed": int(parsed),
        "mentions": int(mentions),
        "paths_kept": kept,
        "paths_rejected": rejected,
        "rejected_share": round(rejected / (kept + rejected), 4) if kept + rejected else 0.0,
        "rejections": rejections,
        "relations": relations,
        "relations_with_5_pairs": relations_5,
        "entities": int(n_ent),
        "typed_entities": int(n_typed),
        "typed_share": round(n_typed / n_ent, 4) if n_ent else 0.0,
        "graph_entities": int(n_graph),
        "typed_graph_entities": int(n_graph_typed),
        "typed_graph_share": round(n_graph_typed / n_graph, 4) if n_graph else 0.0,
        "typed_entities_by_source": by_source,
    }


def file_label(index: int, total: int, name: str) -> str:
    """A progress bar's label: which file of how many (``file 3/12 P17.jsonl``)."""
    return f"file {index}/{total} {name.rsplit('/', 1)[-1]}"
