{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Paper §2.3: A∩B for typed relations A (premise) and B (hypothesis) of different paths, both
-- alignments (see int_relation_overlaps), with |A∩B|, |π1(A∩B)|, |π2(A∩B)| and |π1 ∪ π2| (esr's
-- numerator), all in the premise's orientation. Only overlaps that can pass criteria 2-3 are kept;
-- the acceptance filter re-checks them.
--
-- Each untyped overlap pair (int_relation_overlaps, already pruned) is expanded to the typings of A
-- and of B that contain it (hash joins on (rel_id, arg1, arg2)). The four counts come from ONE
-- two-level aggregation over the pairs' entities (no count(distinct) sorts, no self-join):
-- per (A, B, alignment, entity) whether it occurs as arg1 / arg2 and how many pairs it heads;
-- then per (A, B, alignment): |A∩B| = Σ pairs headed, |π1| = #entities seen as arg1, |π2| likewise,
-- |π1 ∪ π2| = #entities. (A variant with separate arg1/arg2 aggregations and a join for π1 ∩ π2
-- was slower: its CTEs are read twice and get materialised.)
with

relation_overlaps as (

    select * from {{ ref('int_relation_overlaps') }}

),

-- two import CTEs for the same table, each referenced once: Postgres then inlines them and hash-joins
-- the 9M-row table directly instead of materialising and sorting a CTE copy twice
premise_typed_pairs as (

    select * from {{ ref('int_typed_relation_pairs') }}

),

hypothesis_typed_pairs as (

    select * from {{ ref('int_typed_relation_pairs') }}

),

typed_joined as (

    select
        premise.typed_rel_id as premise_typed_rel_id,
        hypothesis.typed_rel_id as hypothesis_typed_rel_id,
        relation_overlaps.alignment,
        relation_overlaps.arg1_entity_id,
        relation_overlaps.arg2_entity_id

    from relation_overlaps
    inner join premise_typed_pairs as premise
        on relation_overlaps.premise_rel_id = premise.rel_id
        and relation_overlaps.arg1_entity_id = premise.arg1_entity_id
        and relation_overlaps.arg2_entity_id = premise.arg2_entity_id
    inner join hypothesis_typed_pairs as hypothesis
        on relation_overlaps.hypothesis_rel_id = hypothesis.rel_id
        and relation_overlaps.hypothesis_arg1_entity_id = hypothesis.arg1_entity_id
        and relation_overlaps.hypothesis_arg2_entity_id = hypothesis.arg2_entity_id

),

-- both argument columns unpivoted by a cross join with two sides (typed_joined is read once, so
-- Postgres streams it instead of materialising a 10M-row CTE copy)
sides as (

    select 1 as is_arg1
    union all
    select 0 as is_arg1

),

pair_entities as (

    select
        typed_joined.premise_typed_rel_id,
        typed_joined.hypothesis_typed_rel_id,
        typed_joined.alignment,
        case when sides.is_arg1 = 1 then typed_joined.arg1_entity_id else typed_joined.arg2_entity_id end
            as entity_id,
        sides.is_arg1,
        1 - sides.is_arg1 as is_arg2

    from typed_joined
    cross join sides

),

entity_roles as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        entity_id,
        sum(is_arg1) as n_pairs_as_arg1,
        max(is_arg1) as seen_as_arg1,
        max(is_arg2) as seen_as_arg2

    from pair_entities
    group by
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        entity_id

),

typed_overlaps as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        sum(n_pairs_as_arg1) as overlap_size,
        sum(seen_as_arg1) as n_overlap_arg1,
        sum(seen_as_arg2) as n_overlap_arg2,
        count(*) as n_overlap_entities

    from entity_roles
    group by
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment
    having sum(n_pairs_as_arg1) >= {{ var('r_min') }}
        and sum(seen_as_arg1) >= {{ var('r_min') }}
        and sum(seen_as_arg2) >= {{ var('r_min') }}

),

final as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        cast(overlap_size as bigint) as overlap_size,
        cast(n_overlap_arg1 as bigint) as n_overlap_arg1,
        cast(n_overlap_arg2 as bigint) as n_overlap_arg2,
        cast(n_overlap_entities as bigint) as n_overlap_entities

    from typed_overlaps

)

select * from final
