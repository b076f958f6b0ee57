{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- The typings each untyped overlap pair (int_relation_overlaps) can belong to, as bit masks over
-- slot type ranks (bit r-1 = the slot's type of rank r, see int_slot_types_ranked; ⊤ matches every
-- entity). A pair (x, y) of relation R is in R's typing (s, u) iff s ∈ τ(x) and u ∈ τ(y), so the
-- typings of a pair are the product of one mask per entity and slot: int_pair_overlaps counts typed
-- overlaps from these four small integers instead of joining typed relation members.
-- All four masks are in the premise's orientation: x = arg1 of the premise, y = arg2; the
-- hypothesis' masks are taken from the slot x (resp. y) fills in the hypothesis (slot 1 straight,
-- slot 2 crossed).
with

relation_overlaps as (

    select * from {{ ref('int_relation_overlaps') }}

),

slot_types as (

    select * from {{ ref('int_slot_types_ranked') }}

),

entity_types as (

    select * from {{ ref('int_entity_types') }}

),

-- every (relation, slot, entity) an overlap pair fills
slot_entities as (

    select
        premise_rel_id as rel_id,
        1 as slot,
        arg1_entity_id as entity_id

    from relation_overlaps

    union

    select
        premise_rel_id as rel_id,
        2 as slot,
        arg2_entity_id as entity_id

    from relation_overlaps

    union

    select
        hypothesis_rel_id as rel_id,
        1 as slot,
        hypothesis_arg1_entity_id as entity_id

    from relation_overlaps

    union

    select
        hypothesis_rel_id as rel_id,
        2 as slot,
        hypothesis_arg2_entity_id as entity_id

    from relation_overlaps

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
        relation_overlaps.relation_pair_id,
        relation_overlaps.premise_rel_id,
        relation_overlaps.hypothesis_rel_id,
        relation_overlaps.alignment,
        relation_overlaps.arg1_entity_id,
        relation_overlaps.arg2_entity_id,
        coalesce(premise_slot1.type_mask, 0) as arg1_premise_mask,
        coalesce(premise_slot2.type_mask, 0) as arg2_premise_mask,
        coalesce(
            case when relation_overlaps.alignment = 'straight' then hypothesis_slot1.type_mask
                else hypothesis_slot2.type_mask end,
            0
        ) as arg1_hypothesis_mask,
        coalesce(
            case when relation_overlaps.alignment = 'straight' then hypothesis_slot2.type_mask
                else hypothesis_slot1.type_mask end,
            0
        ) as arg2_hypothesis_mask

    from relation_overlaps
    left join slot_entity_masks as premise_slot1
        on relation_overlaps.premise_rel_id = premise_slot1.rel_id
        and premise_slot1.slot = 1
        and relation_overlaps.arg1_entity_id = premise_slot1.entity_id
    left join slot_entity_masks as premise_slot2
        on relation_overlaps.premise_rel_id = premise_slot2.rel_id
        and premise_slot2.slot = 2
        and relation_overlaps.arg2_entity_id = premise_slot2.entity_id
    left join slot_entity_masks as hypothesis_slot1
        on relation_overlaps.hypothesis_rel_id = hypothesis_slot1.rel_id
        and hypothesis_slot1.slot = 1
        and relation_overlaps.hypothesis_arg1_entity_id = hypothesis_slot1.entity_id
    left join slot_entity_masks as hypothesis_slot2
        on relation_overlaps.hypothesis_rel_id = hypothesis_slot2.rel_id
        and hypothesis_slot2.slot = 2
        and relation_overlaps.hypothesis_arg2_entity_id = hypothesis_slot2.entity_id

)

select * from final
