{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Paper §2.2 as bit masks: pair (x, y) of R is in R's typing (s, u) iff s ∈ τ(x) and u ∈ τ(y), ⊤
-- matching every entity. arg1_mask has bit r-1 set for every slot-1 type of rank r
-- (int_slot_types_ranked) that x has, arg2_mask likewise for y and slot 2; the pair's typings are
-- the product of the two masks. One row per pair instead of one per (pair, typing): typed relation
-- sizes, members and typed overlaps are all computed from these masks. Relations below r_min (no
-- ranked slot types) and pairs with an argument that matches none of its slot's types (in no
-- typing) are left out.
with

-- one import CTE per use (Postgres materialises a CTE that is read more than once)
slot1_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),

slot2_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),

relation_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),

slot_types as (

    select * from {{ ref('int_slot_types_ranked') }}

),

entity_types as (

    select * from {{ ref('int_entity_types') }}

),

-- types are looked up once per (relation, slot, entity), not per pair: hub entities fill a slot of
-- a relation with many partners
slot_entities as (

    select
        rel_id,
        1 as slot,
        arg1_entity_id as entity_id

    from slot1_pairs
    group by
        rel_id,
        arg1_entity_id

    union all

    select
        rel_id,
        2 as slot,
        arg2_entity_id as entity_id

    from slot2_pairs
    group by
        rel_id,
        arg2_entity_id

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

),

final as (

    select
        relation_pairs.rel_id,
        relation_pairs.arg1_entity_id,
        relation_pairs.arg2_entity_id,
        relation_pairs.n_instances,
        slot1.type_mask as arg1_mask,
        slot2.type_mask as arg2_mask

    from relation_pairs
    inner join slot_entity_masks as slot1
        on relation_pairs.rel_id = slot1.rel_id
        and slot1.slot = 1
        and relation_pairs.arg1_entity_id = slot1.entity_id
    inner join slot_entity_masks as slot2
        on relation_pairs.rel_id = slot2.rel_id
        and slot2.slot = 2
        and relation_pairs.arg2_entity_id = slot2.entity_id

)

select * from final
