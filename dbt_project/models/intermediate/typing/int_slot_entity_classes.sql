{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Each entity filling a slot of a relation (|R| ≥ r_min) with its own type mask (int_slot_entity_types)
-- and the OR of its partners' masks in the other slot. A first argument x is in π1(R_{s,u}) iff its own
-- mask admits s and some partner admits u, i.e. iff bit s-1 of type_mask and bit u-1 of partner_mask
-- are set (a second argument likewise with the roles swapped). Typed relation sizes
-- (int_typed_relations) and signatures (int_type_signatures) are read from these two masks instead
-- of from the typed relations' members.
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
slot1_pairs as (

    select * from {{ ref('int_relation_pair_typings') }}

),

slot2_pairs as (

    select * from {{ ref('int_relation_pair_typings') }}

),

slot_entity_classes as (

    select
        rel_id,
        1 as slot,
        arg1_entity_id as entity_id,
        max(arg1_mask) as type_mask,
        bit_or(arg2_mask) as partner_mask

    from slot1_pairs
    group by
        rel_id,
        arg1_entity_id

    union all

    select
        rel_id,
        2 as slot,
        arg2_entity_id as entity_id,
        max(arg2_mask) as type_mask,
        bit_or(arg1_mask) as partner_mask

    from slot2_pairs
    group by
        rel_id,
        arg2_entity_id

)

select * from slot_entity_classes
