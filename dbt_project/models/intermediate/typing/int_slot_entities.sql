{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'slot', 'entity_id'],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- Every (relation, slot, entity filling that slot) with the number of the relation's pairs it fills the
-- slot of: π1(R) and π2(R) with weights, and the first batch of those pairs. Slot type counts
-- (int_slot_type_counts) and type masks (int_slot_entity_types) are computed per slot entity from
-- here, not per pair: hub entities fill a slot of a relation with many partners.
-- Incremental: the pairs new to the graph add to the previous counts.
with

-- the pairs new to the graph (every pair in a full build); one import CTE per use (Postgres
-- materialises a CTE that is read twice)
slot1_pairs as (

    select * from {{ changed_rows(ref('int_relation_pairs')) }}
    where first_batch_id > {{ previous_max_batch_id() }}

),

slot2_pairs as (

    select * from {{ changed_rows(ref('int_relation_pairs')) }}
    where first_batch_id > {{ previous_max_batch_id() }}

),

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

{% if is_incremental() %}
previous_slot_entities as (

    select * from {{ previous_build(this) }}

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
