{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'slot', 'type_name'],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- Paper §2.2's ranking counts, for every relation and slot i: per type t, |{p ∈ R : t ∈ τ(π_i(p))}|
-- (n_entity_pairs) and the number of slot entities with t (n_entities); the top type ⊤ (var top_type)
-- counts every pair and entity: |R| and |π_i(R)|. Sums over slot entities (int_slot_entities), which
-- are counted once, however many pairs they fill the slot of.
-- Incremental: the changed slot entities add their new pairs (and themselves, when new) to the
-- previous counts; the types of an entity already in the graph do not change (int_build_plan).
with

{% if is_incremental() %}
changed_slot_entities as (

    select * from {{ changed_rows(ref('int_slot_entities')) }}

),

previous_slot_entities as (

    select * from {{ previous_build(ref('int_slot_entities')) }}

),

slot_entities as (

    select
        changed_slot_entities.rel_id,
        changed_slot_entities.slot,
        changed_slot_entities.entity_id,
        changed_slot_entities.n_pairs - coalesce(previous_slot_entities.n_pairs, 0) as n_pairs,
        case when previous_slot_entities.entity_id is null then 1 else 0 end as n_entities

    from changed_slot_entities
    left join previous_slot_entities
        on changed_slot_entities.rel_id = previous_slot_entities.rel_id
        and changed_slot_entities.slot = previous_slot_entities.slot
        and changed_slot_entities.entity_id = previous_slot_entities.entity_id

),

top_slot_entities as (

    select * from slot_entities

),
{% else %}
-- one import CTE per use (Postgres materialises a CTE that is read twice)
slot_entities as (

    select
        rel_id,
        slot,
        entity_id,
        n_pairs,
        1 as n_entities

    from {{ ref('int_slot_entities') }}

),

top_slot_entities as (

    select
        rel_id,
        slot,
        n_pairs,
        1 as n_entities

    from {{ ref('int_slot_entities') }}

),
{% endif %}

entity_types as (

    select * from {{ ref('int_entity_types') }}

),

counts as (

    select
        slot_entities.rel_id,
        slot_entities.slot,
        entity_types.type_name,
        sum(slot_entities.n_pairs) as n_entity_pairs,
        sum(slot_entities.n_entities) as n_entities

    from slot_entities
    inner join entity_types
        on slot_entities.entity_id = entity_types.entity_id
    group by
        slot_entities.rel_id,
        slot_entities.slot,
        entity_types.type_name

    union all

    select
        rel_id,
        slot,
        {{ top_type() }} as type_name,
        sum(n_pairs) as n_entity_pairs,
        sum(n_entities) as n_entities

    from top_slot_entities
    group by
        rel_id,
        slot

),

{% if is_incremental() %}
previous_counts as (

    select * from {{ previous_build(this) }}

),

final as (

    select
        counts.rel_id,
        counts.slot,
        counts.type_name,
        cast(coalesce(previous_counts.n_entity_pairs, 0) + counts.n_entity_pairs as bigint) as n_entity_pairs,
        cast(coalesce(previous_counts.n_entities, 0) + counts.n_entities as bigint) as n_entities

    from counts
    left join previous_counts
        on counts.rel_id = previous_counts.rel_id
        and counts.slot = previous_counts.slot
        and counts.type_name = previous_counts.type_name

)
{% else %}
final as (

    select
        rel_id,
        slot,
        type_name,
        cast(n_entity_pairs as bigint) as n_entity_pairs,
        cast(n_entities as bigint) as n_entities

    from counts

)
{% endif %}

select * from final
