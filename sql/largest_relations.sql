-- The largest relations of the untyped graph (by distinct entity pairs), with their typings.
--
-- Usage: .venv/bin/sherliic-db psql -v limit=20 -f sql/largest_relations.sql
-- Variables: limit = number of relations (default 20).
\if :{?limit}
\else
\set limit 20
\endif

select
    rel_id,
    path,
    predicate_lemma,
    n_entity_pairs,
    n_instances,
    n_arg1_entities,
    n_arg2_entities,
    n_typed_relations
from warehouse.relations
order by n_entity_pairs desc, n_instances desc, path asc
limit :limit;
