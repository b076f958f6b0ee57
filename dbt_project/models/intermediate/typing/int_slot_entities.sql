{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'slot', 'entity_id'],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
{%- set plan = build_plan() %}
-- depends_on: {{ ref('int_build_plan') }}
-- Every (relation, slot, entity filling that slot) with the number of the relation's pairs it fills the
-- slot of: π1(R) and π2(R) with weights, and the first batch of those pairs. Slot type counts
-- (int_slot_type_counts) and type masks (int_slot_entity_types) are computed per slot entity from
-- here, not per pair: hub entities fill a slot of a relation with many partners.
-- Incremental: the pairs new to the graph (int_relation_pairs' changed rows with a new first batch)
-- add to the previous counts.
with

{% if plan.incremental %}
-- one import CTE per use (Postgres materialises a CTE that is read twice)
slot1_pairs as (

    select * from {{ delta_relation(ref('int_relation_pairs')) }}
    where first_batch_id > {{ plan.previous_max_batch_id }}

),

slot2_pairs as (

    select * from {{ delta_relation(ref('int_relation_pairs')) }}
    where first_batch_id > {{ plan.previous_max_batch_id }}

),
{% else %}
slot1_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),

slot2_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),
{% endif %}

slot_entities as (

    select
        rel_id,
        1 as slot,
        arg1_entity_id as entity_id,
        cast(count(*) as integer) as n_pairs,
        min(first_batch_id) as first_batch_id

    from slot1_pairs
    group by
        rel_id,
        arg1_entity_id

    union all

    select
        rel_id,
        2 as slot,
        arg2_entity_id as entity_id,
        cast(count(*) as integer) as n_pairs,
        min(first_batch_id) as first_batch_id

    from slot2_pairs
    group by
        rel_id,
        arg2_entity_id

),

{% if plan.incremental %}
previous_slot_entities as (

    select * from {{ previous_relation(this) }}

),

final as (

    select
        slot_entities.rel_id,
        slot_entities.slot,
        slot_entities.entity_id,
        cast(coalesce(previous_slot_entities.n_pairs, 0) + slot_entities.n_pairs as integer) as n_pairs,
        coalesce(previous_slot_entities.first_batch_id, slot_entities.first_batch_id) as first_batch_id

    from slot_entities
    left join previous_slot_entities
        on slot_entities.rel_id = previous_slot_entities.rel_id
        and slot_entities.slot = previous_slot_entities.slot
        and slot_entities.entity_id = previous_slot_entities.entity_id

)
{% else %}
final as (

    select * from slot_entities

)
{% endif %}

select * from final
