{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
{%- set k = var('top_k_types') | int -%}
{%- if k * k > 64 -%}
    {{ exceptions.raise_compiler_error(
        "int_typed_overlaps: top_k_types = " ~ k ~ " is not supported; the typed overlap counts pack "
        ~ "k² (slot type, slot type) combinations into one 64-bit mask, so k must be at most 8") }}
{%- endif %}
-- Paper §2.3: A∩B for typed relations A (premise) and B (hypothesis) of different paths, both
-- alignments (see int_relation_overlaps), with |A∩B|, |π1(A∩B)|, |π2(A∩B)| and |π1 ∪ π2| (esr's
-- numerator), all in the premise's orientation. Only overlaps that can pass criteria 2-3 are kept;
-- the acceptance filter re-checks them.
--
-- Scale: nothing joins typed relation members. Whether a pair (x, y) of the untyped overlap O
-- (int_relation_overlaps) is in typing a of A and b of B only depends on the type masks of x and y
-- (int_overlap_pair_typings), and int_overlap_typing_sizes has already dropped the typings whose
-- share of the overlap cannot reach r_min. To test a and b at once, the masks of x are multiplied
-- into one bigint with bit (rank in A − 1)·k + (rank in B − 1) set for every admitted (slot type of
-- A, slot type of B) combination (macro mask_product), likewise for y. Then everything is a count
-- class (relation pair, x combinations, y combinations, weights) that holds for (a, b) iff both
-- combination bits of (a, b) are set:
--   pairs: the pair's own masks, weight 1 in |A∩B|;
--   first arguments: own x masks and the OR of the partners' y masks (the entity is in π1(A∩B) iff
--   some partner is admitted), weight 1 in |π1| and |π1 ∪ π2|; second arguments likewise;
--   entities in both roles: the AND of their two role classes, weight −1 in |π1 ∪ π2| (counted once).
-- Classes meet typing pairs by an equi-join on the premise's slot ranks (the first factor of the
-- combinations, exploded by mask_rank_table), then the exact bit test picks the hypothesis typing.
with

overlap_masks as (

    select * from {{ ref('int_overlap_pair_typings') }}

),

-- one import CTE per use (Postgres materialises a CTE that is read twice)
premise_sides as (

    select * from {{ ref('int_overlap_typing_sizes') }}
    where is_premise

),

hypothesis_sides as (

    select * from {{ ref('int_overlap_typing_sizes') }}
    where not is_premise

),

-- at most 2^k · k rows: read twice, materialised for free
mask_ranks as (

    {{ mask_rank_table(k) }}

),

-- typing pairs left to count, with the bit of their (A, B) slot type combination for x and for y
typing_pairs as (

    select
        premise.relation_pair_id,
        premise.alignment,
        premise.typed_rel_id as premise_typed_rel_id,
        hypothesis.typed_rel_id as hypothesis_typed_rel_id,
        premise.arg1_type_rank as premise_arg1_type_rank,
        premise.arg2_type_rank as premise_arg2_type_rank,
        (premise.arg1_type_rank - 1) * {{ k }} + hypothesis.arg1_type_rank - 1 as arg1_combination,
        (premise.arg2_type_rank - 1) * {{ k }} + hypothesis.arg2_type_rank - 1 as arg2_combination

    from premise_sides as premise
    inner join hypothesis_sides as hypothesis
        on premise.relation_pair_id = hypothesis.relation_pair_id

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

),

-- the premise typings each class can hold: its first factors exploded to slot ranks
class_premise_ranks as (

    select
        count_classes.*,
        arg1_mask_ranks.type_rank as premise_arg1_type_rank,
        arg2_mask_ranks.type_rank as premise_arg2_type_rank

    from count_classes
    inner join mask_ranks as arg1_mask_ranks
        on {{ first_factor('count_classes.arg1_combinations', k) }} = arg1_mask_ranks.mask
    inner join mask_ranks as arg2_mask_ranks
        on {{ first_factor('count_classes.arg2_combinations', k) }} = arg2_mask_ranks.mask

),

class_matches as (

    select
        typing_pairs.premise_typed_rel_id,
        typing_pairs.hypothesis_typed_rel_id,
        typing_pairs.alignment,
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

typed_overlaps as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        sum(n_pairs) as overlap_size,
        sum(n_arg1) as n_overlap_arg1,
        sum(n_arg2) as n_overlap_arg2,
        sum(n_entities) as n_overlap_entities

    from class_matches
    group by
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment

),

canonical_overlaps as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
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
