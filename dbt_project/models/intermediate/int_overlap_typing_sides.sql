{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Step 1 of the typed overlaps (int_pair_overlaps): for every overlapping relation pair (A, B,
-- alignment), the typings of A and of B whose share of the overlap can still pass criteria 2-3.
-- A typed overlap a∩b is a subset of O ∩ a (O = the untyped overlap, int_relation_overlaps), so
-- |O ∩ a|, |π1(O ∩ a)| and |π2(O ∩ a)| bound |a∩b| and its projections: typings of either side below
-- r_min are dropped before they are paired (the pairing is what multiplies rows). The counts come
-- from count classes, not pairs: pairs with the same (x mask, y mask) of int_overlap_type_masks form
-- one class; a first argument x is in π1(O ∩ a) iff its own mask and the OR of its partners' masks
-- admit a, so first arguments with equal (own, partners) masks form one class (second arguments
-- likewise). A separate table so that the planner knows its size when int_pair_overlaps pairs them.
with

overlap_masks as (

    select * from {{ ref('int_overlap_type_masks') }}

),

relation_pairs as (

    select distinct
        relation_pair_id,
        premise_rel_id,
        hypothesis_rel_id,
        alignment

    from {{ ref('int_overlap_type_masks') }}

),

typed_relations as (

    select * from {{ ref('int_typed_subrelations') }}

),

-- |πi(A∩B)| ≤ |πi(A)|: typings with a projection below r_min never yield an InfCand
eligible_typings as (

    select
        typed_rel_id,
        rel_id,
        type_rank_a,
        type_rank_b

    from typed_relations
    where n_arg1_entities >= {{ var('r_min') }}
        and n_arg2_entities >= {{ var('r_min') }}

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

-- count classes of one side: pairs by (x mask, y mask); first arguments by (own mask, OR of the
-- partners' masks); second arguments by (OR of the partners' masks, own mask)
side_rows as (

    select
        relation_pair_id,
        is_premise,
        arg1_mask,
        arg2_mask,
        count(*) as n_pairs,
        0 as n_arg1,
        0 as n_arg2

    from side_pairs
    group by
        relation_pair_id,
        is_premise,
        arg1_mask,
        arg2_mask

    union all

    select
        relation_pair_id,
        is_premise,
        max(arg1_mask) as arg1_mask,
        bit_or(arg2_mask) as arg2_mask,
        0 as n_pairs,
        1 as n_arg1,
        0 as n_arg2

    from side_pairs
    group by
        relation_pair_id,
        is_premise,
        arg1_entity_id

    union all

    select
        relation_pair_id,
        is_premise,
        bit_or(arg1_mask) as arg1_mask,
        max(arg2_mask) as arg2_mask,
        0 as n_pairs,
        0 as n_arg1,
        1 as n_arg2

    from side_pairs
    group by
        relation_pair_id,
        is_premise,
        arg2_entity_id

),

side_classes as (

    select
        relation_pair_id,
        is_premise,
        arg1_mask,
        arg2_mask,
        sum(n_pairs) as n_pairs,
        sum(n_arg1) as n_arg1,
        sum(n_arg2) as n_arg2

    from side_rows
    group by
        relation_pair_id,
        is_premise,
        arg1_mask,
        arg2_mask

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
            then eligible_typings.type_rank_a else eligible_typings.type_rank_b end as arg1_type_rank,
        case when sides.is_premise or relation_pairs.alignment = 'straight'
            then eligible_typings.type_rank_b else eligible_typings.type_rank_a end as arg2_type_rank

    from relation_pairs
    cross join (select true as is_premise union all select false as is_premise) as sides
    inner join eligible_typings
        on eligible_typings.rel_id = case when sides.is_premise
            then relation_pairs.premise_rel_id else relation_pairs.hypothesis_rel_id end

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
        sum(side_classes.n_pairs) as n_pairs,
        sum(side_classes.n_arg1) as n_arg1_entities,
        sum(side_classes.n_arg2) as n_arg2_entities

    from side_typings
    inner join side_classes
        on side_typings.relation_pair_id = side_classes.relation_pair_id
        and side_typings.is_premise = side_classes.is_premise
    where {{ bit_is_set('side_classes.arg1_mask', 'side_typings.arg1_type_rank - 1') }}
        and {{ bit_is_set('side_classes.arg2_mask', 'side_typings.arg2_type_rank - 1') }}
    group by
        side_typings.relation_pair_id,
        side_typings.premise_rel_id,
        side_typings.hypothesis_rel_id,
        side_typings.alignment,
        side_typings.is_premise,
        side_typings.typed_rel_id,
        side_typings.arg1_type_rank,
        side_typings.arg2_type_rank
    having sum(side_classes.n_pairs) >= {{ var('r_min') }}
        and sum(side_classes.n_arg1) >= {{ var('r_min') }}
        and sum(side_classes.n_arg2) >= {{ var('r_min') }}

)

select * from side_survivors
