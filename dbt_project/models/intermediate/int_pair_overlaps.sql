{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Paper §2.3: A∩B for typed relations A (premise) and B (hypothesis) of different paths, both
-- alignments (see int_relation_overlaps), with |A∩B|, |π1(A∩B)|, |π2(A∩B)| and |π1 ∪ π2| (esr's
-- numerator), all in the premise's orientation. Only overlaps that can pass criteria 2-3 are kept;
-- the acceptance filter re-checks them.
--
-- Each untyped overlap pair (int_relation_overlaps, already pruned) is expanded to the typings of A
-- and of B that contain it (hash joins on (rel_id, arg1, arg2)). The counts come from hash
-- aggregations (no count(distinct) sorts): per (A, B, alignment, x) the pairs x heads -> |A∩B| and
-- |π1|; distinct (A, B, alignment, y) -> |π2|; |π1 ∪ π2| = |π1| + |π2| − |π1 ∩ π2| with the
-- intersection from a join of the two. Two aggregations over the pairs use less memory than one over
-- both columns unpivoted (which spilled at 2M instances).
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

arg1_counts as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        arg1_entity_id as entity_id,
        count(*) as n_pairs

    from typed_joined
    group by
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        arg1_entity_id

),

arg2_entities as (

    select distinct
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        arg2_entity_id as entity_id

    from typed_joined

),

arg1_stats as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        sum(n_pairs) as overlap_size,
        count(*) as n_overlap_arg1

    from arg1_counts
    group by
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment
    having sum(n_pairs) >= {{ var('r_min') }}
        and count(*) >= {{ var('r_min') }}

),

arg2_stats as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        count(*) as n_overlap_arg2

    from arg2_entities
    group by
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment
    having count(*) >= {{ var('r_min') }}

),

-- |π1 ∩ π2|: entities on both sides, needed for |π1 ∪ π2| = |π1| + |π2| − |π1 ∩ π2|
both_sides as (

    select
        arg1_counts.premise_typed_rel_id,
        arg1_counts.hypothesis_typed_rel_id,
        arg1_counts.alignment,
        count(*) as n_both_sides

    from arg1_counts
    inner join arg2_entities
        on arg1_counts.premise_typed_rel_id = arg2_entities.premise_typed_rel_id
        and arg1_counts.hypothesis_typed_rel_id = arg2_entities.hypothesis_typed_rel_id
        and arg1_counts.alignment = arg2_entities.alignment
        and arg1_counts.entity_id = arg2_entities.entity_id
    group by
        arg1_counts.premise_typed_rel_id,
        arg1_counts.hypothesis_typed_rel_id,
        arg1_counts.alignment

),

typed_overlaps as (

    select
        arg1_stats.premise_typed_rel_id,
        arg1_stats.hypothesis_typed_rel_id,
        arg1_stats.alignment,
        arg1_stats.overlap_size,
        arg1_stats.n_overlap_arg1,
        arg2_stats.n_overlap_arg2,
        arg1_stats.n_overlap_arg1 + arg2_stats.n_overlap_arg2 - coalesce(both_sides.n_both_sides, 0)
            as n_overlap_entities

    from arg1_stats
    inner join arg2_stats
        on arg1_stats.premise_typed_rel_id = arg2_stats.premise_typed_rel_id
        and arg1_stats.hypothesis_typed_rel_id = arg2_stats.hypothesis_typed_rel_id
        and arg1_stats.alignment = arg2_stats.alignment
    left join both_sides
        on arg1_stats.premise_typed_rel_id = both_sides.premise_typed_rel_id
        and arg1_stats.hypothesis_typed_rel_id = both_sides.hypothesis_typed_rel_id
        and arg1_stats.alignment = both_sides.alignment

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
