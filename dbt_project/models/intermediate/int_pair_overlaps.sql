{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
{%- set k = var('top_k_types') | int -%}
{%- if k * k > 64 -%}
    {{ exceptions.raise_compiler_error(
        "int_pair_overlaps: top_k_types = " ~ k ~ " is not supported; the typed overlap counts pack "
        ~ "k² (slot type, slot type) combinations into one 64-bit mask, so k must be at most 8") }}
{%- endif %}
-- Paper §2.3: A∩B for typed relations A (premise) and B (hypothesis) of different paths, both
-- alignments (see int_relation_overlaps), with |A∩B|, |π1(A∩B)|, |π2(A∩B)| and |π1 ∪ π2| (esr's
-- numerator), all in the premise's orientation. Only overlaps that can pass criteria 2-3 are kept;
-- the acceptance filter re-checks them.
--
-- Scale: nothing joins typed relation members. Whether a pair (x, y) of the untyped overlap O
-- (int_relation_overlaps) is in typing a of A and b of B only depends on the type masks of x and y
-- (int_overlap_type_masks), and int_overlap_typing_sides has already dropped the typings whose
-- share of the overlap cannot reach r_min. The surviving (a, b) are counted exactly from count classes instead of
-- pairs and entities: pairs with the same masks form one class, and an entity is in π1(A∩B) iff its
-- own masks and the OR of its partners' masks admit (a, b), so entities with equal (own, partners)
-- masks form one class. To test a and b at once, the masks of x are multiplied into one bigint with
-- bit (rank in A − 1)·k + (rank in B − 1) set for every admitted (slot type of A, slot type of B)
-- combination (macro mask_product), likewise for y. An entity can be a first argument in one pair
-- of O and a second in another, so its class keeps both roles and |π1 ∪ π2| counts it once.
with

overlap_masks as (

    select * from {{ ref('int_overlap_type_masks') }}

),

-- one import CTE per use (Postgres materialises a CTE that is read twice)
premise_sides as (

    select * from {{ ref('int_overlap_typing_sides') }}
    where is_premise

),

hypothesis_sides as (

    select * from {{ ref('int_overlap_typing_sides') }}
    where not is_premise

),

-- typing pairs left to count, with the bit of their (A, B) slot type combination for x and for y
typing_pairs as (

    select
        premise.relation_pair_id,
        premise.alignment,
        premise.typed_rel_id as premise_typed_rel_id,
        hypothesis.typed_rel_id as hypothesis_typed_rel_id,
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

-- each entity's masks as a first argument (own, OR of partners) and as a second (OR of partners,
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

-- pair classes use the first-argument columns only (a pair is in A∩B iff both its masks admit it)
count_classes as (

    select
        relation_pair_id,
        arg1_combinations as as_arg1_arg1_combinations,
        arg2_combinations as as_arg1_arg2_combinations,
        cast(0 as bigint) as as_arg2_arg1_combinations,
        cast(0 as bigint) as as_arg2_arg2_combinations,
        count(*) as n_pairs,
        0 as n_entities

    from combination_pairs
    group by
        relation_pair_id,
        arg1_combinations,
        arg2_combinations

    union all

    select
        relation_pair_id,
        as_arg1_arg1_combinations,
        as_arg1_arg2_combinations,
        as_arg2_arg1_combinations,
        as_arg2_arg2_combinations,
        0 as n_pairs,
        count(*) as n_entities

    from entity_masks
    group by
        relation_pair_id,
        as_arg1_arg1_combinations,
        as_arg1_arg2_combinations,
        as_arg2_arg1_combinations,
        as_arg2_arg2_combinations

),

class_matches as (

    select
        typing_pairs.premise_typed_rel_id,
        typing_pairs.hypothesis_typed_rel_id,
        typing_pairs.alignment,
        count_classes.n_pairs,
        count_classes.n_entities,
        {{ bit_is_set('count_classes.as_arg1_arg1_combinations', 'typing_pairs.arg1_combination') }}
        and {{ bit_is_set('count_classes.as_arg1_arg2_combinations', 'typing_pairs.arg2_combination') }}
            as in_as_arg1,
        {{ bit_is_set('count_classes.as_arg2_arg1_combinations', 'typing_pairs.arg1_combination') }}
        and {{ bit_is_set('count_classes.as_arg2_arg2_combinations', 'typing_pairs.arg2_combination') }}
            as in_as_arg2

    from typing_pairs
    inner join count_classes
        on typing_pairs.relation_pair_id = count_classes.relation_pair_id

),

typed_overlaps as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        sum(case when in_as_arg1 then n_pairs else 0 end) as overlap_size,
        sum(case when in_as_arg1 then n_entities else 0 end) as n_overlap_arg1,
        sum(case when in_as_arg2 then n_entities else 0 end) as n_overlap_arg2,
        sum(case when in_as_arg1 or in_as_arg2 then n_entities else 0 end) as n_overlap_entities

    from class_matches
    where in_as_arg1
        or in_as_arg2
    group by
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment

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
    where overlap_size >= {{ var('r_min') }}
        and n_overlap_arg1 >= {{ var('r_min') }}
        and n_overlap_arg2 >= {{ var('r_min') }}

)

select * from final
