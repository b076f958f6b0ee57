{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'slot', 'entity_id'],
    reset_relations_on=['rel_id'],
    pre_hook=["{{ heavy_model_settings() }}", "{{ joins_in_written_order() }}"],
    post_hook="{{ analyze_table() }}",
) }}
-- For each relation, slot and entity filling that slot: the ranked slot types (int_slot_types_ranked)
-- the entity has, as a bit mask (bit r-1 = the type of type_rank r, its place by name; ⊤ is set for
-- every entity). Types are looked up once per (relation, slot, entity), not per pair: hub entities fill
-- a slot of a relation
-- with many partners. A table of its own so that the planner knows its size when
-- int_relation_pair_typings joins it twice (as a CTE it was estimated at a few thousand rows and
-- joined slot 1 × slot 2 per relation first). Entities matching none of the slot's types are left out.
-- Each slot entity meets its own types first (about two per entity) and those meet the slot's ranked
-- types, rather than every ranked type of the slot being looked up for every entity (7M lookups at 5M
-- instances); ⊤, which every entity has, is added in a join of its own.
-- Incremental: the slot entities new to the graph and every slot entity of a relation typed from
-- scratch (int_retyped_relations); the masks of the others do not change. In a full build every slot
-- entity is new.
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
typed_slot_entities as (

    select * from {{ ref('int_slot_entities') }}
    where first_batch_id > {{ previous_max_batch_id() }}
        or {{ is_retyped_relation('rel_id') }}

),

top_slot_entities as (

    select * from {{ ref('int_slot_entities') }}
    where first_batch_id > {{ previous_max_batch_id() }}
        or {{ is_retyped_relation('rel_id') }}

),

slot_types as (

    select * from {{ ref('int_slot_types_ranked') }}

),

top_slot_types as (

    select * from {{ ref('int_slot_types_ranked') }}
    where is_top_type

),

entity_types as (

    select * from {{ ref('int_entity_types') }}

),

slot_type_ranks as (

    select
        typed_slot_entities.rel_id,
        typed_slot_entities.slot,
        typed_slot_entities.entity_id,
        slot_types.type_rank

    from typed_slot_entities
    inner join entity_types
        on typed_slot_entities.entity_id = entity_types.entity_id
    inner join slot_types
        on typed_slot_entities.rel_id = slot_types.rel_id
        and typed_slot_entities.slot = slot_types.slot
        and entity_types.type_name = slot_types.type_name

    union all

    select
        top_slot_entities.rel_id,
        top_slot_entities.slot,
        top_slot_entities.entity_id,
        top_slot_types.type_rank

    from top_slot_entities
    inner join top_slot_types
        on top_slot_entities.rel_id = top_slot_types.rel_id
        and top_slot_entities.slot = top_slot_types.slot

),

slot_entity_masks as (

    select
        rel_id,
        slot,
        entity_id,
        bit_or(1 << (type_rank - 1)) as type_mask

    from slot_type_ranks
    group by
        rel_id,
        slot,
        entity_id

)

select * from slot_entity_masks
