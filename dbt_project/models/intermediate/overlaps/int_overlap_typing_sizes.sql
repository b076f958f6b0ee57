{{ config(
    materialized=incremental_materialization(),
    unique_key='relation_pair_id',
    reset_relations_on=[relation_pair_premise('relation_pair_id'), relation_pair_hypothesis('relation_pair_id')],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
{%- set k = var('top_k_types') | int -%}
-- depends_on: {{ ref('int_retyped_relations') }}
-- Step 1 of the typed overlaps (int_typed_overlaps): for every overlapping relation pair (A, B,
-- alignment), the typings of A and of B whose share of the overlap can still pass criteria 2-3.
-- A typed overlap a∩b is a subset of O' ∩ a (O' = the pairs of the untyped overlap that some typing of
-- B admits: the only ones a∩b can hold), so |O' ∩ a|, |π1(O' ∩ a)| and |π2(O' ∩ a)| bound |a∩b| and its
-- projections: typings of either side below r_min are dropped before they are paired (the pairing is
-- what multiplies rows). Summed from the count classes (int_overlap_classes) projected on one side's
-- masks: the first factors of the combinations for A, the second ones for B. A table of its own so
-- that the planner knows its size when int_typed_overlaps pairs the typings (as a CTE it was estimated
-- at a few rows and joined the wrong way round).
-- Incremental: the relation pairs whose classes changed, and those of a relation with a typed relation
-- that became eligible (|π1|, |π2| ≥ r_min for the first time).
with

{% if is_incremental() %}
-- the relations with a typed relation that can reach the projection bounds for the first time (new, or
-- too small before)
newly_eligible_relations as (

    select distinct typed_relations.rel_id
    from {{ ref('int_typed_relations') }} as typed_relations
    left join {{ previous_build(ref('int_typed_relations')) }} as previous_typings
        on typed_relations.typed_rel_id = previous_typings.typed_rel_id
    where {{ can_reach_projection_bound('typed_relations') }}
        and not {{ is_retyped_relation('typed_relations.rel_id') }}
        and (
            previous_typings.typed_rel_id is null
            or not ({{ can_reach_projection_bound('previous_typings') }})
        )

),

changed_classes as (

    select * from {{ changed_rows(ref('int_overlap_classes')) }}

),

-- the classes of the relation pairs to count again, read once (a few per cent of the classes; read
-- three times below, so Postgres materialises them): a relation pair whose classes changed has all
-- of them in the delta (unique_key), the pairs of a newly eligible relation are read from the view
-- (used below; the linter renders the other branch of the choice there)
affected_classes as (  -- noqa: ST03

    select * from changed_classes

    union all

    select * from {{ ref('int_overlap_classes') }}
    where (
        {{ relation_pair_premise('relation_pair_id') }} in (select newly_eligible_relations.rel_id from newly_eligible_relations)
        or {{ relation_pair_hypothesis('relation_pair_id') }} in (select newly_eligible_relations.rel_id from newly_eligible_relations)
    )
    and relation_pair_id not in (select changed_classes.relation_pair_id from changed_classes)

),
{% endif %}

-- one import CTE per use (Postgres materialises a CTE that is read twice); in an incremental build the
-- affected classes
relation_pair_classes as (

    select * from {{ 'affected_classes' if is_incremental() else ref('int_overlap_classes') }}

),

premise_side_classes as (

    select * from {{ 'affected_classes' if is_incremental() else ref('int_overlap_classes') }}

),

hypothesis_side_classes as (

    select * from {{ 'affected_classes' if is_incremental() else ref('int_overlap_classes') }}

),

typed_relations as (

    select * from {{ ref('int_typed_relations') }}

),

-- at most 2^k · k rows: read twice, materialised for free
mask_ranks as (

    {{ mask_rank_table(k) }}

),

relation_pairs as (

    select
        relation_pair_id,
        {{ relation_pair_premise('relation_pair_id') }} as premise_rel_id,
        {{ relation_pair_hypothesis('relation_pair_id') }} as hypothesis_rel_id,
        {{ relation_pair_alignment('relation_pair_id') }} as alignment

    from relation_pair_classes
    group by relation_pair_id

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

-- the classes seen from each side: A's masks of x and y (first factors), and B's (second factors)
side_class_rows as (

    select
        relation_pair_id,
        true as is_premise,
        {{ first_factor('arg1_combinations', k) }} as arg1_mask,
        {{ first_factor('arg2_combinations', k) }} as arg2_mask,
        n_pairs,
        n_arg1 as n_arg1_entities,
        n_arg2 as n_arg2_entities

    from premise_side_classes

    union all

    select
        relation_pair_id,
        false as is_premise,
        {{ second_factor('arg1_combinations', k) }} as arg1_mask,
        {{ second_factor('arg2_combinations', k) }} as arg2_mask,
        n_pairs,
        n_arg1 as n_arg1_entities,
        n_arg2 as n_arg2_entities

    from hypothesis_side_classes

),

-- the counts per admitted (slot rank of x, slot rank of y): each class's masks exploded to ranks and
-- summed BEFORE typings are joined (at most k² rows per relation pair and side remain). Classes with
-- equal masks on a side are not merged first: at 5M instances that merged 1.47M rows into 1.33M and
-- cost more than it saved.
side_rank_counts as (

    select
        side_class_rows.relation_pair_id,
        side_class_rows.is_premise,
        arg1_mask_ranks.type_rank as arg1_type_rank,
        arg2_mask_ranks.type_rank as arg2_type_rank,
        sum(side_class_rows.n_pairs) as n_pairs,
        sum(side_class_rows.n_arg1_entities) as n_arg1_entities,
        sum(side_class_rows.n_arg2_entities) as n_arg2_entities

    from side_class_rows
    inner join mask_ranks as arg1_mask_ranks
        on side_class_rows.arg1_mask = arg1_mask_ranks.mask
    inner join mask_ranks as arg2_mask_ranks
        on side_class_rows.arg2_mask = arg2_mask_ranks.mask
    group by
        side_class_rows.relation_pair_id,
        side_class_rows.is_premise,
        arg1_mask_ranks.type_rank,
        arg2_mask_ranks.type_rank
    having sum(side_class_rows.n_pairs) >= {{ var('r_min') }}
        and sum(side_class_rows.n_arg1_entities) >= {{ var('r_min') }}
        and sum(side_class_rows.n_arg2_entities) >= {{ var('r_min') }}

),

-- the typings of each side with the ranks of the slot types x and y fill (a crossed hypothesis has
-- x in its second slot)
side_typings as (

    select
        relation_pairs.relation_pair_id,
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

final as (

    select
        side_typings.relation_pair_id,
        side_typings.alignment,
        side_typings.is_premise,
        side_typings.typed_rel_id,
        side_typings.arg1_type_rank,
        side_typings.arg2_type_rank,
        cast(side_rank_counts.n_pairs as integer) as n_pairs,
        cast(side_rank_counts.n_arg1_entities as integer) as n_arg1_entities,
        cast(side_rank_counts.n_arg2_entities as integer) as n_arg2_entities

    from side_rank_counts
    inner join side_typings
        on side_rank_counts.relation_pair_id = side_typings.relation_pair_id
        and side_rank_counts.is_premise = side_typings.is_premise
        and side_rank_counts.arg1_type_rank = side_typings.arg1_type_rank
        and side_rank_counts.arg2_type_rank = side_typings.arg2_type_rank

)

select * from final
