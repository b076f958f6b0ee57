{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'slot', 'entity_id'],
    reset_relations_on=['rel_id'],
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
-- depends_on: {{ ref('int_retyped_relations') }}
-- Each entity filling a slot of a relation (|R| ≥ r_min) with its own type mask (int_slot_entity_types)
-- and the OR of its partners' masks in the other slot. A first argument x is in π1(R_{s,u}) iff its own
-- mask admits s and some partner admits u, i.e. iff bit s-1 of type_mask and bit u-1 of partner_mask
-- are set (a second argument likewise with the roles swapped). Typed relation sizes
-- (int_typing_sizes) and signatures (int_type_signatures) are read from these two masks instead of
-- from the typed relations' members.
-- Incremental: from the changed pairs (int_relation_pair_typings: every pair of a relation typed from
-- scratch, the new or recounted pairs of the others). Elsewhere the masks do not change, so an entity
-- of a new or changed pair ORs that pair's partner mask into its previous one.
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
slot1_pairs as (

    select * from {{ changed_rows(ref('int_relation_pair_typings')) }}

),

slot2_pairs as (

    select * from {{ changed_rows(ref('int_relation_pair_typings')) }}

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

),

{% if is_incremental() %}
-- the previous classes of the relations updated from their new pairs
previous_classes as (

    select * from {{ previous_build(this) }}
    where not {{ is_retyped_relation('rel_id') }}

),

final as (

    select
        slot_entity_classes.rel_id,
        slot_entity_classes.slot,
        slot_entity_classes.entity_id,
        slot_entity_classes.type_mask,
        slot_entity_classes.partner_mask | coalesce(previous_classes.partner_mask, 0) as partner_mask

    from slot_entity_classes
    left join previous_classes
        on slot_entity_classes.rel_id = previous_classes.rel_id
        and slot_entity_classes.slot = previous_classes.slot
        and slot_entity_classes.entity_id = previous_classes.entity_id

)
{% else %}
final as (

    select * from slot_entity_classes

)
{% endif %}

select * from final
