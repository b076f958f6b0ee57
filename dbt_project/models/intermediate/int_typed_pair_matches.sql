{{ config(materialized='table', pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Every (pair, typing) match before the size filter: pair (x, y) of R matches the typing (s, u) of R
-- iff s ∈ τ(x) and u ∈ τ(y), where the top type matches every entity. Read by both
-- int_typed_subrelations (sizes) and int_typed_relation_pairs (members of kept typings), so it is
-- materialized once as a table. Typings are named by their slot ranks (integers: narrower rows,
-- cheaper hashing than type names on ~5 rows per entity pair); names are joined back on the typed relations.
with

relation_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),

slot_types as (

    select * from {{ ref('int_slot_types_ranked') }}

),

entity_types as (

    select * from {{ ref('int_entity_types') }}

),

slot1_matches as (

    select
        relation_pairs.rel_id,
        relation_pairs.arg1_entity_id,
        relation_pairs.arg2_entity_id,
        relation_pairs.n_instances,
        slot_types.type_rank

    from relation_pairs
    inner join slot_types
        on relation_pairs.rel_id = slot_types.rel_id
        and slot_types.slot = 1
        and not slot_types.is_top_type
    inner join entity_types
        on relation_pairs.arg1_entity_id = entity_types.entity_id
        and slot_types.type_name = entity_types.type_name

    union all

    select
        relation_pairs.rel_id,
        relation_pairs.arg1_entity_id,
        relation_pairs.arg2_entity_id,
        relation_pairs.n_instances,
        slot_types.type_rank

    from relation_pairs
    inner join slot_types
        on relation_pairs.rel_id = slot_types.rel_id
        and slot_types.slot = 1
        and slot_types.is_top_type

),

slot2_matches as (

    select
        relation_pairs.rel_id,
        relation_pairs.arg1_entity_id,
        relation_pairs.arg2_entity_id,
        slot_types.type_rank

    from relation_pairs
    inner join slot_types
        on relation_pairs.rel_id = slot_types.rel_id
        and slot_types.slot = 2
        and not slot_types.is_top_type
    inner join entity_types
        on relation_pairs.arg2_entity_id = entity_types.entity_id
        and slot_types.type_name = entity_types.type_name

    union all

    select
        relation_pairs.rel_id,
        relation_pairs.arg1_entity_id,
        relation_pairs.arg2_entity_id,
        slot_types.type_rank

    from relation_pairs
    inner join slot_types
        on relation_pairs.rel_id = slot_types.rel_id
        and slot_types.slot = 2
        and slot_types.is_top_type

),

matches as (

    select
        slot1_matches.rel_id,
        slot1_matches.type_rank as type_rank_a,
        slot2_matches.type_rank as type_rank_b,
        slot1_matches.arg1_entity_id,
        slot1_matches.arg2_entity_id,
        slot1_matches.n_instances

    from slot1_matches
    inner join slot2_matches
        on slot1_matches.rel_id = slot2_matches.rel_id
        and slot1_matches.arg1_entity_id = slot2_matches.arg1_entity_id
        and slot1_matches.arg2_entity_id = slot2_matches.arg2_entity_id

)

select * from matches
