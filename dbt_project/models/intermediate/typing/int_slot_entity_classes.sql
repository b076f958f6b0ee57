{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'slot', 'entity_id'],
    reset_relations_on=['rel_id'],
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
{%- set plan = build_plan() %}
-- depends_on: {{ ref('int_build_plan') }}
-- depends_on: {{ ref('int_retyped_relations') }}
-- Each entity filling a slot of a relation (|R| ≥ r_min) with its own type mask (int_slot_entity_types)
-- and the OR of its partners' masks in the other slot. A first argument x is in π1(R_{s,u}) iff its own
-- mask admits s and some partner admits u, i.e. iff bit s-1 of type_mask and bit u-1 of partner_mask
-- are set (a second argument likewise with the roles swapped). Typed relation sizes
-- (int_typing_sizes) and signatures (int_type_signatures) are read from these two masks instead of
-- from the typed relations' members.
-- Incremental: recomputed for the relations whose slot types changed; elsewhere the masks do not
-- change, so an entity of a new or changed pair ORs that pair's partner mask into its previous one.
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
slot1_pairs as (

    {{ recomputed_relation_rows(ref('int_relation_pair_typings'), plan) }}

),

slot2_pairs as (

    {{ recomputed_relation_rows(ref('int_relation_pair_typings'), plan) }}

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

{% if plan.incremental %}
changed_slot1_pairs as (

    select * from {{ delta_relation(ref('int_relation_pair_typings')) }}
    where {{ is_not_retyped_relation('rel_id') }}

),

changed_slot2_pairs as (

    select * from {{ delta_relation(ref('int_relation_pair_typings')) }}
    where {{ is_not_retyped_relation('rel_id') }}

),

previous_classes as (

    select * from {{ previous_relation(this) }}

),

changed_classes as (

    select
        rel_id,
        1 as slot,
        arg1_entity_id as entity_id,
        max(arg1_mask) as type_mask,
        bit_or(arg2_mask) as partner_mask

    from changed_slot1_pairs
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

    from changed_slot2_pairs
    group by
        rel_id,
        arg2_entity_id

),

updated_classes as (

    select
        changed_classes.rel_id,
        changed_classes.slot,
        changed_classes.entity_id,
        changed_classes.type_mask,
        changed_classes.partner_mask | coalesce(previous_classes.partner_mask, 0) as partner_mask

    from changed_classes
    left join previous_classes
        on changed_classes.rel_id = previous_classes.rel_id
        and changed_classes.slot = previous_classes.slot
        and changed_classes.entity_id = previous_classes.entity_id

),

final as (

    select * from slot_entity_classes
    union all
    select * from updated_classes

)
{% else %}
final as (

    select * from slot_entity_classes

)
{% endif %}

select * from final
