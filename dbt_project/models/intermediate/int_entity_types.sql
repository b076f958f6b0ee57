{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- τ(e) on entity keys, for the entities of the graph only.
-- Sources: the var type_sources (in stg_raw__entity_types). With var map_types = true every type is
-- replaced by its targets in raw.type_mappings and unmapped types are dropped (e.g. Freebase -> FIGER).
-- Types spelled like the top type (var top_type) are dropped: ⊤ already matches every entity.
with

entity_types as (

    select * from {{ ref('stg_raw__entity_types') }}

),

entity_keys as (

    select * from {{ ref('int_entity_keys') }}

),

{% if map_types_enabled() %}
type_mappings as (

    select * from {{ ref('stg_raw__type_mappings') }}

),

mapped as (

    select
        entity_types.entity_id,
        type_mappings.target_type as type_name

    from entity_types
    inner join type_mappings
        on entity_types.type_name = type_mappings.source_type

),
{% else %}
mapped as (

    select
        entity_id,
        type_name

    from entity_types

),
{% endif %}

keyed as (

    select distinct
        entity_keys.entity_id,
        mapped.type_name

    from mapped
    inner join entity_keys
        on mapped.entity_id = entity_keys.source_entity_id
    where mapped.type_name <> {{ top_type() }}

)

select * from keyed
