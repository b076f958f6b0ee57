{{ config(post_hook="{{ analyze_table() }}") }}
-- Paper §2.2: tsg(T) = (∩_{e∈π1(T)} τ(e), ∩_{e∈π2(T)} τ(e)), as sorted arrays.
-- Interpretation (DESIGN §4): an empty intersection (e.g. one untyped entity) becomes {⊤}.
-- A type is in the intersection iff every distinct entity of the slot has it.
with

typed_pairs as (

    select * from {{ ref('int_typed_relation_pairs') }}

),

typed_relations as (

    select * from {{ ref('int_typed_subrelations') }}

),

entity_types as (

    select * from {{ ref('int_entity_types') }}

),

slot_entities as (

    select distinct
        typed_rel_id,
        1 as slot,
        arg1_entity_id as entity_id

    from typed_pairs

    union all

    select distinct
        typed_rel_id,
        2 as slot,
        arg2_entity_id as entity_id

    from typed_pairs

),

slot_sizes as (

    select
        typed_rel_id,
        slot,
        count(*) as n_entities

    from slot_entities
    group by
        typed_rel_id,
        slot

),

type_support as (

    select
        slot_entities.typed_rel_id,
        slot_entities.slot,
        entity_types.type_name,
        count(*) as n_entities

    from slot_entities
    inner join entity_types
        on slot_entities.entity_id = entity_types.entity_id
    group by
        slot_entities.typed_rel_id,
        slot_entities.slot,
        entity_types.type_name

),

shared_types as (

    select
        type_support.typed_rel_id,
        type_support.slot,
        {{ sorted_set_agg('type_support.type_name') }} as tsg

    from type_support
    inner join slot_sizes
        on type_support.typed_rel_id = slot_sizes.typed_rel_id
        and type_support.slot = slot_sizes.slot
    where type_support.n_entities = slot_sizes.n_entities
    group by
        type_support.typed_rel_id,
        type_support.slot

),

signatures as (

    select
        typed_relations.typed_rel_id,
        coalesce(slot1.tsg, {{ text_array(top_type()) }}) as tsg_a,
        coalesce(slot2.tsg, {{ text_array(top_type()) }}) as tsg_b

    from typed_relations
    left join shared_types as slot1
        on typed_relations.typed_rel_id = slot1.typed_rel_id
        and slot1.slot = 1
    left join shared_types as slot2
        on typed_relations.typed_rel_id = slot2.typed_rel_id
        and slot2.slot = 2

)

select * from signatures
