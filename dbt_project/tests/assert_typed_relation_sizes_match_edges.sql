-- typed_relations.n_entity_pairs = its number of teg_edges, and every typed relation has ≥ r_min pairs.
with

edge_counts as (

    select
        typed_rel_id,
        count(*) as n_edges

    from {{ ref('teg_edges') }}
    group by typed_rel_id

)

select typed_relations.*
from {{ ref('typed_relations') }} as typed_relations
left join edge_counts
    on typed_relations.typed_rel_id = edge_counts.typed_rel_id
where coalesce(edge_counts.n_edges, 0) <> typed_relations.n_entity_pairs
    or typed_relations.n_entity_pairs < {{ var('r_min') }}
