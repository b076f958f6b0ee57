{{ config(
    materialized=incremental_materialization(),
    unique_key='relation_pair_id',
    reset_relations_on=[relation_pair_premise('relation_pair_id'), relation_pair_hypothesis('relation_pair_id')],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
{%- set k = var('top_k_types') | int -%}
{%- if k * k > 64 -%}
    {{ exceptions.raise_compiler_error(
        "int_overlap_classes: top_k_types = " ~ k ~ " is not supported; the typed overlap counts pack "
        ~ "k² (slot type, slot type) combinations into one 64-bit mask, so k must be at most 8") }}
{%- endif %}
-- The count classes the typed overlaps (int_typed_overlaps) are summed from, per overlapping relation
-- pair (A, B, alignment) of int_relation_overlaps. Whether a pair (x, y) of the untyped overlap O is in
-- typing a of A and b of B only depends on the type masks of x and y, so the masks of x are multiplied
-- into one bigint with bit (rank in A − 1)·k + (rank in B − 1) set for every admitted (slot type of A,
-- slot type of B) combination (macro mask_product), likewise for y. Then everything is a count class
-- (relation pair, x combinations, y combinations, weights) that holds for (a, b) iff both combination
-- bits of (a, b) are set:
--   pairs: the pair's own masks, weight 1 in |A∩B|;
--   first arguments: own x masks and the OR of the partners' y masks (the entity is in π1(A∩B) iff
--   some partner is admitted), weight 1 in |π1| and |π1 ∪ π2|; second arguments likewise;
--   entities in both roles: the AND of their two role classes, weight −1 in |π1 ∪ π2| (counted once).
-- A class with an empty combination mask holds for no typing pair and is left out. A table of its
-- own: the typed stage reads it three times (side bounds and matches).
-- Incremental: the classes of the relation pairs whose shared pairs changed, from all their pairs.
with

overlap_masks as (

    select * from {{ ref('int_relation_overlaps') }}
    {%- if is_incremental() %}
    where relation_pair_id in (
            select changed_overlaps.relation_pair_id
            from {{ changed_rows(ref('int_relation_overlaps')) }} as changed_overlaps
        )
    {%- endif %}

),

combination_pairs as (

    select
        relation_pair_id,
        arg1_entity_id,
        arg2_entity_id,
        {{ mask_product('arg1_premise_mask', 'arg1_hypothesis_mask', k) }} as arg1_combinations,
        {{ mask_product('arg2_premise_mask', 'arg2_hypothesis_mask', k) }} as arg2_combinations

    from overlap_masks

),

-- each entity's classes as a first argument (own, OR of partners) and as a second (OR of partners,
-- own); 0 for a role it does not have
entity_occurrences as (

    select
        relation_pair_id,
        arg1_entity_id as entity_id,
        arg1_combinations as as_arg1_arg1_combinations,
        arg2_combinations as as_arg1_arg2_combinations,
        cast(0 as bigint) as as_arg2_arg1_combinations,
        cast(0 as bigint) as as_arg2_arg2_combinations

    from combination_pairs

    union all

    select
        relation_pair_id,
        arg2_entity_id as entity_id,
        cast(0 as bigint) as as_arg1_arg1_combinations,
        cast(0 as bigint) as as_arg1_arg2_combinations,
        arg1_combinations as as_arg2_arg1_combinations,
        arg2_combinations as as_arg2_arg2_combinations

    from combination_pairs

),

entity_masks as (

    select
        relation_pair_id,
        bit_or(as_arg1_arg1_combinations) as as_arg1_arg1_combinations,
        bit_or(as_arg1_arg2_combinations) as as_arg1_arg2_combinations,
        bit_or(as_arg2_arg1_combinations) as as_arg2_arg1_combinations,
        bit_or(as_arg2_arg2_combinations) as as_arg2_arg2_combinations

    from entity_occurrences
    group by
        relation_pair_id,
        entity_id

),

class_rows as (

    select
        relation_pair_id,
        arg1_combinations,
        arg2_combinations,
        1 as n_pairs,
        0 as n_arg1,
        0 as n_arg2,
        0 as n_entities

    from combination_pairs

    union all

    select
        relation_pair_id,
        as_arg1_arg1_combinations as arg1_combinations,
        as_arg1_arg2_combinations as arg2_combinations,
        0 as n_pairs,
        1 as n_arg1,
        0 as n_arg2,
        1 as n_entities

    from entity_masks

    union all

    select
        relation_pair_id,
        as_arg2_arg1_combinations as arg1_combinations,
        as_arg2_arg2_combinations as arg2_combinations,
        0 as n_pairs,
        0 as n_arg1,
        1 as n_arg2,
        1 as n_entities

    from entity_masks

    union all

    select
        relation_pair_id,
        as_arg1_arg1_combinations & as_arg2_arg1_combinations as arg1_combinations,
        as_arg1_arg2_combinations & as_arg2_arg2_combinations as arg2_combinations,
        0 as n_pairs,
        0 as n_arg1,
        0 as n_arg2,
        -1 as n_entities

    from entity_masks

),

-- a class with an empty combination mask holds for no typing pair
count_classes as (

    select
        relation_pair_id,
        arg1_combinations,
        arg2_combinations,
        cast(sum(n_pairs) as integer) as n_pairs,
        cast(sum(n_arg1) as integer) as n_arg1,
        cast(sum(n_arg2) as integer) as n_arg2,
        cast(sum(n_entities) as integer) as n_entities

    from class_rows
    where arg1_combinations <> 0
        and arg2_combinations <> 0
    group by
        relation_pair_id,
        arg1_combinations,
        arg2_combinations

)

select * from count_classes
