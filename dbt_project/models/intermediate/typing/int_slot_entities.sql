{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Every (relation, slot, entity filling that slot) with the number of the relation's pairs it fills the
-- slot of: π1(R) and π2(R) with weights. Slot type counts (int_slot_types_ranked) and type masks
-- (int_slot_entity_types) are computed per slot entity from here, not per pair: hub entities fill a
-- slot of a relation with many partners.
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
slot1_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),

slot2_pairs as (

    select * from {{ ref('int_relation_pairs') }}

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

)

select * from slot_entities
