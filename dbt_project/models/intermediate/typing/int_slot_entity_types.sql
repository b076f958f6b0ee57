{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'slot', 'entity_id'],
    reset_relations_on=['rel_id'],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
{%- set plan = build_plan() %}
-- depends_on: {{ ref('int_build_plan') }}
-- depends_on: {{ ref('int_retyped_relations') }}
-- For each relation, slot and entity filling that slot: the ranked slot types (int_slot_types_ranked)
-- the entity has, as a bit mask (bit r-1 = the type of rank r; ⊤ is set for every entity). Types are
-- looked up once per (relation, slot, entity), not per pair: hub entities fill a slot of a relation
-- with many partners. A table of its own so that the planner knows its size when
-- int_relation_pair_typings joins it twice (as a CTE it was estimated at a few thousand rows and
-- joined slot 1 × slot 2 per relation first). Entities matching none of the slot's types are left out.
-- Incremental: every slot entity of a relation whose slot types changed (int_retyped_relations), and
-- the slot entities new to the graph; the masks of the others do not change.
with

slot_entities as (

    select * from {{ ref('int_slot_entities') }}
    {%- if plan.incremental %}
    where {{ is_retyped_relation('rel_id') }}
        or first_batch_id > {{ plan.previous_max_batch_id }}
    {%- endif %}

),

slot_types as (

    select * from {{ ref('int_slot_types_ranked') }}

),

entity_types as (

    select * from {{ ref('int_entity_types') }}

),

slot_entity_masks as (

    select
        slot_entities.rel_id,
        slot_entities.slot,
        slot_entities.entity_id,
        bit_or(1 << (slot_types.type_rank - 1)) as type_mask

    from slot_entities
    inner join slot_types
        on slot_entities.rel_id = slot_types.rel_id
        and slot_entities.slot = slot_types.slot
    left join entity_types
        on slot_entities.entity_id = entity_types.entity_id
        and slot_types.type_name = entity_types.type_name
    where slot_types.is_top_type
        or entity_types.entity_id is not null
    group by
        slot_entities.rel_id,
        slot_entities.slot,
        slot_entities.entity_id

)

select * from slot_entity_masks
