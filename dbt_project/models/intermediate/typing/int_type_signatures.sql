{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Paper §2.2: tsg(T) = (∩_{e∈π1(T)} τ(e), ∩_{e∈π2(T)} τ(e)), as sorted arrays.
-- Interpretation (docs/design.md §4): an empty intersection (e.g. one untyped entity) becomes {⊤}.
with

-- one import CTE per use: a CTE referenced twice is materialised as a copy by Postgres
slot1_pairs as (

    select * from {{ ref('int_typed_relation_pairs') }}

),

slot2_pairs as (

    select * from {{ ref('int_typed_relation_pairs') }}

),

typed_relations as (

    select * from {{ ref('int_typed_relations') }}

),

entity_types as (

    select * from {{ ref('int_entity_types') }}

),

-- Entities with the same type set behave the same in an intersection, and a relation slot has far
-- fewer distinct type sets than entities: intersect over distinct type sets (typeset_id 0 = ∅,
-- untyped) instead of over entities. A type is in the slot's tsg iff every type set has it.
entity_type_sets as (

    select
        entity_id,
        {{ sorted_set_agg('type_name') }} as types

    from entity_types
    group by entity_id

),

type_set_keys as (

    select
        types,
        row_number() over (order by types) as typeset_id

    from (select distinct types from entity_type_sets) as distinct_type_sets

),

entity_type_set_keys as (

    select
        entity_type_sets.entity_id,
        type_set_keys.typeset_id

    from entity_type_sets
    inner join type_set_keys
        on entity_type_sets.types = type_set_keys.types

),

type_set_types as (

    select distinct
        entity_type_set_keys.typeset_id,
        entity_types.type_name

    from entity_type_set_keys
    inner join entity_types
        on entity_type_set_keys.entity_id = entity_types.entity_id

),

slot_type_sets as (

    select distinct
        slot1_pairs.typed_rel_id,
        1 as slot,
        coalesce(entity_type_set_keys.typeset_id, 0) as typeset_id

    from slot1_pairs
    left join entity_type_set_keys
        on slot1_pairs.arg1_entity_id = entity_type_set_keys.entity_id

    union all

    select distinct
        slot2_pairs.typed_rel_id,
        2 as slot,
        coalesce(entity_type_set_keys.typeset_id, 0) as typeset_id

    from slot2_pairs
    left join entity_type_set_keys
        on slot2_pairs.arg2_entity_id = entity_type_set_keys.entity_id

),

slot_sizes as (

    select
        typed_rel_id,
        slot,
        count(*) as n_type_sets

    from slot_type_sets
    group by
        typed_rel_id,
        slot

),

type_support as (

    select
        slot_type_sets.typed_rel_id,
        slot_type_sets.slot,
        type_set_types.type_name,
        count(*) as n_type_sets

    from slot_type_sets
    inner join type_set_types
        on slot_type_sets.typeset_id = type_set_types.typeset_id
    group by
        slot_type_sets.typed_rel_id,
        slot_type_sets.slot,
        type_set_types.type_name

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
    where type_support.n_type_sets = slot_sizes.n_type_sets
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
