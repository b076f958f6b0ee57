{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'arg1_entity_id', 'arg2_entity_id'],
    reset_relations_on=['rel_id'],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- Paper §2.2 as bit masks: pair (x, y) of R is in R's typing (s, u) iff s ∈ τ(x) and u ∈ τ(y), ⊤
-- matching every entity. arg1_mask has bit r-1 set for every slot-1 type of type_rank r
-- (int_slot_types_ranked) that x has, arg2_mask likewise for y and slot 2; the pair's typings are
-- the product of the two masks. One row per pair instead of one per (pair, typing): typed relation
-- sizes, members and typed overlaps are all computed from these masks. Relations below r_min (no
-- ranked slot types) and pairs with an argument that matches none of its slot's types (in no
-- typing) are left out.
-- Incremental: every pair of a relation typed from scratch (int_retyped_relations: every ranked
-- relation in a full build), and the pairs of the others that are new or whose count changed.
with

relation_pairs as (

    select * from {{ ref('int_relation_pairs') }}
    where {{ is_retyped_relation('rel_id') }}
    {%- if is_incremental() %}

    union all

    select * from {{ changed_rows(ref('int_relation_pairs')) }}
    where not {{ is_retyped_relation('rel_id') }}
    {%- endif %}

),

-- one import CTE per use (Postgres materialises a CTE that is read twice)
slot1_masks as (

    select * from {{ ref('int_slot_entity_types') }}
    where slot = 1

),

slot2_masks as (

    select * from {{ ref('int_slot_entity_types') }}
    where slot = 2

),

final as (

    select
        relation_pairs.rel_id,
        relation_pairs.arg1_entity_id,
        relation_pairs.arg2_entity_id,
        relation_pairs.n_instances,
        relation_pairs.first_batch_id,
        slot1.type_mask as arg1_mask,
        slot2.type_mask as arg2_mask

    from relation_pairs
    inner join slot1_masks as slot1
        on relation_pairs.rel_id = slot1.rel_id
        and relation_pairs.arg1_entity_id = slot1.entity_id
    inner join slot2_masks as slot2
        on relation_pairs.rel_id = slot2.rel_id
        and relation_pairs.arg2_entity_id = slot2.entity_id

)

select * from final
