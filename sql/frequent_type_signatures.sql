-- The most frequent type signatures tsg = (tsg_a, tsg_b) of the typed relations (the TEG's nodes),
-- with how many inference candidates have a premise of that signature.
--
-- Usage: .venv/bin/sherliic-db psql -v limit=25 -f sql/frequent_type_signatures.sql
-- Variables: limit = number of signatures (default 25).
\if :{?limit}
\else
\set limit 25
\endif

with

signatures as (

    select
        array_to_string(tsg_a, '|') || ' / ' || array_to_string(tsg_b, '|') as type_signature,
        typed_rel_id,
        n_entity_pairs
    from warehouse.typed_relations

),

premises as (

    select
        premise_typed_rel_id as typed_rel_id,
        count(*) as n_candidates
    from warehouse.inference_candidates
    group by premise_typed_rel_id

)

select
    signatures.type_signature,
    count(*) as n_typed_relations,
    sum(signatures.n_entity_pairs) as n_entity_pairs,
    coalesce(sum(premises.n_candidates), 0) as n_candidates_as_premise
from signatures
left join premises on signatures.typed_rel_id = premises.typed_rel_id
group by signatures.type_signature
order by n_typed_relations desc, n_entity_pairs desc, signatures.type_signature asc
limit :limit;
