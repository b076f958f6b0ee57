{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Step 1 of the typed overlaps (int_typed_overlaps): for every overlapping relation pair (A, B,
-- alignment), the typings of A and of B whose share of the overlap can still pass criteria 2-3.
-- A typed overlap a∩b is a subset of O ∩ a (O = the untyped overlap, int_relation_overlaps), so
-- |O ∩ a|, |π1(O ∩ a)| and |π2(O ∩ a)| bound |a∩b| and its projections: typings of either side below
-- r_min are dropped before they are paired (the pairing is what multiplies rows). The counts are
-- summed over size parts of the overlap pairs' masks (macro typing_size_parts), not over
-- pairs. A separate table so that the planner knows its size when int_typed_overlaps pairs them.
with

overlap_masks as (

    select * from {{ ref('int_overlap_pair_typings') }}

),

relation_pairs as (

    select distinct
        relation_pair_id,
        premise_rel_id,
        hypothesis_rel_id,
        alignment

    from {{ ref('int_overlap_pair_typings') }}

),

typed_relations as (

    select * from {{ ref('int_typed_relations') }}

),

-- at most 2^k · k rows: read twice, materialised for free
mask_ranks as (

    {{ mask_rank_table(var('top_k_types') | int) }}

),

eligible_typings as (

    select
        typed_relations.typed_rel_id,
        typed_relations.rel_id,
        typed_relations.type_rank_a,
        typed_relations.type_rank_b

    from typed_relations
    where {{ can_reach_projection_bound('typed_relations') }}

),

-- every overlap pair seen from each side: the premise's masks of x and y, and the hypothesis'
side_pairs as (

    select
        relation_pair_id,
        true as is_premise,
        arg1_entity_id,
        arg2_entity_id,
        arg1_premise_mask as arg1_mask,
        arg2_premise_mask as arg2_mask

    from overlap_masks

    union all

    select
        relation_pair_id,
        false as is_premise,
        arg1_entity_id,
        arg2_entity_id,
        arg1_hypothesis_mask as arg1_mask,
        arg2_hypothesis_mask as arg2_mask

    from overlap_masks

),

-- size parts of each side (side_pairs is small enough to be materialised once)
side_classes as (

    {{ typing_size_parts('side_pairs', ['relation_pair_id', 'is_premise']) }}

),

-- the typings of each side with the ranks of the slot types x and y fill (a crossed hypothesis has
-- x in its second slot)
side_typings as (

    select
        relation_pairs.relation_pair_id,
        relation_pairs.premise_rel_id,
        relation_pairs.hypothesis_rel_id,
        relation_pairs.alignment,
        sides.is_premise,
        eligible_typings.typed_rel_id,
        case when sides.is_premise or relation_pairs.alignment = 'straight'
                then eligible_typings.type_rank_a
            else eligible_typings.type_rank_b
        end as arg1_type_rank,
        case when sides.is_premise or relation_pairs.alignment = 'straight'
                then eligible_typings.type_rank_b
            else eligible_typings.type_rank_a
        end as arg2_type_rank

    -- two constant rows in a subquery (kept as tuned, docs/performance.md)
    from relation_pairs
    cross join (  -- noqa: ST05
        select true as is_premise
        union all
        select false as is_premise
    ) as sides
    inner join eligible_typings
        on eligible_typings.rel_id = case when sides.is_premise
                then relation_pairs.premise_rel_id
            else relation_pairs.hypothesis_rel_id
        end

),

-- the counts per admitted (slot rank of x, slot rank of y): each class's masks exploded to ranks and
-- summed BEFORE typings are joined (at most k² rows per relation pair and side remain)
side_rank_counts as (

    select
        side_classes.relation_pair_id,
        side_classes.is_premise,
        arg1_mask_ranks.type_rank as arg1_type_rank,
        arg2_mask_ranks.type_rank as arg2_type_rank,
        sum(side_classes.n_pairs) as n_pairs,
        sum(side_classes.n_arg1_entities) as n_arg1_entities,
        sum(side_classes.n_arg2_entities) as n_arg2_entities

    from side_classes
    inner join mask_ranks as arg1_mask_ranks
        on side_classes.arg1_mask = arg1_mask_ranks.mask
    inner join mask_ranks as arg2_mask_ranks
        on side_classes.arg2_mask = arg2_mask_ranks.mask
    group by
        side_classes.relation_pair_id,
        side_classes.is_premise,
        arg1_mask_ranks.type_rank,
        arg2_mask_ranks.type_rank
    having sum(side_classes.n_pairs) >= {{ var('r_min') }}
        and sum(side_classes.n_arg1_entities) >= {{ var('r_min') }}
        and sum(side_classes.n_arg2_entities) >= {{ var('r_min') }}

),

side_survivors as (

    select
        side_typings.relation_pair_id,
        side_typings.premise_rel_id,
        side_typings.hypothesis_rel_id,
        side_typings.alignment,
        side_typings.is_premise,
        side_typings.typed_rel_id,
        side_typings.arg1_type_rank,
        side_typings.arg2_type_rank,
        side_rank_counts.n_pairs,
        side_rank_counts.n_arg1_entities,
        side_rank_counts.n_arg2_entities

    from side_rank_counts
    inner join side_typings
        on side_rank_counts.relation_pair_id = side_typings.relation_pair_id
        and side_rank_counts.is_premise = side_typings.is_premise
        and side_rank_counts.arg1_type_rank = side_typings.arg1_type_rank
        and side_rank_counts.arg2_type_rank = side_typings.arg2_type_rank

)

select * from side_survivors
