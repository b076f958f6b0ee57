{{ config(
    materialized=incremental_materialization(),
    unique_key='relation_pair_id',
    reset_relations_on=[relation_pair_premise('relation_pair_id'), relation_pair_hypothesis('relation_pair_id')],
    pre_hook=["{{ heavy_model_settings() }}", "{{ hash_aggregates_only() }}"],
    post_hook="{{ analyze_table() }}",
) }}
{%- set k = var('top_k_types') | int -%}
-- Paper §2.3: A∩B for typed relations A (premise) and B (hypothesis) of different paths, both
-- alignments (see int_relation_overlaps), with |A∩B|, |π1(A∩B)|, |π2(A∩B)| and |π1 ∪ π2| (esr's
-- numerator), all in the premise's orientation. Only overlaps that can pass criteria 2-3 are kept;
-- the acceptance filter re-checks them.
--
-- Scale: nothing joins typed relation members. Everything is summed from the count classes of each
-- relation pair (int_overlap_classes: masks of x and y multiplied into (slot type of A, slot type of B)
-- combinations, class weights for |A∩B|, |π1|, |π2| and |π1 ∪ π2|), for the typing pairs whose
-- sides can reach the bounds (int_overlap_typing_sizes). The classes meet the typing pairs by an
-- equi-join on the premise's slot ranks (the first factor of the combinations, exploded by
-- mask_rank_table), then the exact bit test picks the hypothesis typing. Before that, each class keeps
-- only the combination bits some typing pair can test, and classes left equal are merged.
-- Incremental: the relation pairs whose classes or surviving typings changed: all their typed overlaps.
with

{% if is_incremental() %}
-- used in the incremental branches below (the linter renders the others)
affected_relation_pairs as (  -- noqa: ST03

    select relation_pair_id from {{ changed_rows(ref('int_overlap_classes')) }}
    union
    select relation_pair_id from {{ changed_rows(ref('int_overlap_typing_sizes')) }}

),
{% endif %}

-- one import CTE per use (Postgres materialises a CTE that is read twice)
premise_sides as (

    select * from {{ ref('int_overlap_typing_sizes') }}
    {%- if is_incremental() %}
    where relation_pair_id in (select affected_relation_pairs.relation_pair_id from affected_relation_pairs)
    {%- endif %}

),

hypothesis_sides as (

    select * from {{ ref('int_overlap_typing_sizes') }}
    {%- if is_incremental() %}
    where relation_pair_id in (select affected_relation_pairs.relation_pair_id from affected_relation_pairs)
    {%- endif %}

),

-- the sides again, for the ranks they fill
rank_mask_sides as (

    select * from {{ ref('int_overlap_typing_sizes') }}
    {%- if is_incremental() %}
    where relation_pair_id in (select affected_relation_pairs.relation_pair_id from affected_relation_pairs)
    {%- endif %}

),

match_classes as (

    select * from {{ ref('int_overlap_classes') }}
    {%- if is_incremental() %}
    where relation_pair_id in (select affected_relation_pairs.relation_pair_id from affected_relation_pairs)
    {%- endif %}

),

-- at most 2^k · k rows: read twice, materialised for free
mask_ranks as (

    {{ mask_rank_table(k) }}

),

-- typing pairs left to count, with the bit of their (A, B) slot type combination for x and for y
typing_pairs as (

    select
        premise.relation_pair_id,
        premise.typed_rel_id as premise_typed_rel_id,
        hypothesis.typed_rel_id as hypothesis_typed_rel_id,
        premise.arg1_type_rank as premise_arg1_type_rank,
        premise.arg2_type_rank as premise_arg2_type_rank,
        (premise.arg1_type_rank - 1) * {{ k }} + hypothesis.arg1_type_rank - 1 as arg1_combination,
        (premise.arg2_type_rank - 1) * {{ k }} + hypothesis.arg2_type_rank - 1 as arg2_combination

    from premise_sides as premise
    inner join hypothesis_sides as hypothesis
        on premise.relation_pair_id = hypothesis.relation_pair_id
    where premise.is_premise
        and not hypothesis.is_premise

),

-- per relation pair, the slot ranks its surviving typings fill on each side
side_rank_masks as (

    select
        relation_pair_id,
        bit_or(case when is_premise then 1 << (arg1_type_rank - 1) else 0 end) as premise_arg1_ranks,
        bit_or(case when is_premise then 1 << (arg2_type_rank - 1) else 0 end) as premise_arg2_ranks,
        bit_or(case when is_premise then 0 else 1 << (arg1_type_rank - 1) end) as hypothesis_arg1_ranks,
        bit_or(case when is_premise then 0 else 1 << (arg2_type_rank - 1) end) as hypothesis_arg2_ranks

    from rank_mask_sides
    group by relation_pair_id

),

-- the (premise rank, hypothesis rank) combinations a typing pair can test: every other bit of a class
-- is never read
used_combinations as {{ computed_once() }} (

    select
        relation_pair_id,
        {{ mask_product('premise_arg1_ranks', 'hypothesis_arg1_ranks', k) }} as arg1_combinations,
        {{ mask_product('premise_arg2_ranks', 'hypothesis_arg2_ranks', k) }} as arg2_combinations

    from side_rank_masks

),

-- classes that differ only in unused bits hold the same typing pairs: merged before they are matched
-- (at 5M instances 724k classes became 279k)
used_classes as (

    select
        match_classes.relation_pair_id,
        match_classes.arg1_combinations & used_combinations.arg1_combinations as arg1_combinations,
        match_classes.arg2_combinations & used_combinations.arg2_combinations as arg2_combinations,
        cast(sum(match_classes.n_pairs) as integer) as n_pairs,
        cast(sum(match_classes.n_arg1) as integer) as n_arg1,
        cast(sum(match_classes.n_arg2) as integer) as n_arg2,
        cast(sum(match_classes.n_entities) as integer) as n_entities

    from match_classes
    inner join used_combinations
        on match_classes.relation_pair_id = used_combinations.relation_pair_id
    where match_classes.arg1_combinations & used_combinations.arg1_combinations <> 0
        and match_classes.arg2_combinations & used_combinations.arg2_combinations <> 0
    group by
        match_classes.relation_pair_id,
        match_classes.arg1_combinations & used_combinations.arg1_combinations,
        match_classes.arg2_combinations & used_combinations.arg2_combinations

),

-- the premise typings each class can hold: its first factors exploded to slot ranks
class_premise_ranks as (

    select
        count_classes.*,
        arg1_mask_ranks.type_rank as premise_arg1_type_rank,
        arg2_mask_ranks.type_rank as premise_arg2_type_rank

    from used_classes as count_classes
    inner join mask_ranks as arg1_mask_ranks
        on {{ first_factor('count_classes.arg1_combinations', k) }} = arg1_mask_ranks.mask
    inner join mask_ranks as arg2_mask_ranks
        on {{ first_factor('count_classes.arg2_combinations', k) }} = arg2_mask_ranks.mask

),

class_matches as (

    select
        typing_pairs.relation_pair_id,
        typing_pairs.premise_typed_rel_id,
        typing_pairs.hypothesis_typed_rel_id,
        class_premise_ranks.n_pairs,
        class_premise_ranks.n_arg1,
        class_premise_ranks.n_arg2,
        class_premise_ranks.n_entities

    from class_premise_ranks
    inner join typing_pairs
        on class_premise_ranks.relation_pair_id = typing_pairs.relation_pair_id
        and class_premise_ranks.premise_arg1_type_rank = typing_pairs.premise_arg1_type_rank
        and class_premise_ranks.premise_arg2_type_rank = typing_pairs.premise_arg2_type_rank
    where {{ bit_is_set('class_premise_ranks.arg1_combinations', 'typing_pairs.arg1_combination') }}
        and {{ bit_is_set('class_premise_ranks.arg2_combinations', 'typing_pairs.arg2_combination') }}

),

-- grouped on the ids only: the alignment is part of the relation pair id (a text column in the key of
-- 11.8M rows at 5M instances cost ~10 % of the model's CPU)
typed_overlaps as (

    select
        relation_pair_id,
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        sum(n_pairs) as overlap_size,
        sum(n_arg1) as n_overlap_arg1,
        sum(n_arg2) as n_overlap_arg2,
        sum(n_entities) as n_overlap_entities

    from class_matches
    group by
        relation_pair_id,
        premise_typed_rel_id,
        hypothesis_typed_rel_id

),

canonical_overlaps as (

    select
        relation_pair_id,
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        {{ relation_pair_alignment('relation_pair_id') }} as alignment,
        cast(overlap_size as bigint) as overlap_size,
        cast(n_overlap_arg1 as bigint) as n_overlap_arg1,
        cast(n_overlap_arg2 as bigint) as n_overlap_arg2,
        cast(n_overlap_entities as bigint) as n_overlap_entities

    from typed_overlaps
    where overlap_size >= {{ var('r_min') }}
        and n_overlap_arg1 >= {{ var('r_min') }}
        and n_overlap_arg2 >= {{ var('r_min') }}

),

-- int_relation_overlaps has each relation pair in one direction; B ⇒ A has the same overlap as
-- A ⇒ B (reversed when crossed: B's first arguments are A's second ones)
final as (

    select * from canonical_overlaps

    union all

    select
        relation_pair_id,
        hypothesis_typed_rel_id as premise_typed_rel_id,
        premise_typed_rel_id as hypothesis_typed_rel_id,
        alignment,
        overlap_size,
        case when alignment = 'crossed' then n_overlap_arg2 else n_overlap_arg1 end as n_overlap_arg1,
        case when alignment = 'crossed' then n_overlap_arg1 else n_overlap_arg2 end as n_overlap_arg2,
        n_overlap_entities

    from canonical_overlaps

)

select * from final
