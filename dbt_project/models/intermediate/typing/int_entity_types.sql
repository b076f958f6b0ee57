{{ config(
    materialized=incremental_materialization(),
    unique_key=['entity_id', 'type_name'],
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
-- τ(e) on entity keys, for the entities of the graph only, from the type rows of the build's batches.
-- Sources: the var type_sources (default null = every type_source). With var map_types = true every
-- type is replaced by its targets in the loaded type maps and unmapped types are dropped (e.g.
-- Freebase -> FIGER). Types spelled like the top type (var top_type) are dropped: ⊤ already matches
-- every entity.
with

entity_types as (

    select * from {{ ref('stg_extract__entity_types') }}

),

build_batches as (

    select * from {{ ref('int_build_batches') }}

),

-- the entities new to the graph (every entity in a full build): the plan ensures that no new batch
-- changes the types of an entity already in it
entity_keys as (

    select * from {{ changed_rows(ref('int_entity_keys')) }}
    where first_batch_id > {{ previous_max_batch_id() }}

),

{% if map_types_enabled() %}
-- used in the map_types branch below (the linter renders the other branch)
type_mappings as (  -- noqa: ST03

    select * from {{ ref('stg_extract__type_mappings') }}

),
{% endif %}

selected_types as (

    select
        entity_types.entity_id,
        entity_types.type_name

    from entity_types
    inner join build_batches
        on entity_types.batch_id = build_batches.batch_id
    where {{ type_sources_filter('entity_types.type_source') }}

),

{% if map_types_enabled() %}
loaded_mappings as (

    select distinct
        type_mappings.source_type,
        type_mappings.target_type

    from type_mappings
    inner join build_batches
        on type_mappings.batch_id = build_batches.batch_id

),

mapped as (

    select
        selected_types.entity_id,
        loaded_mappings.target_type as type_name

    from selected_types
    inner join loaded_mappings
        on selected_types.type_name = loaded_mappings.source_type

),
{% else %}
mapped as (

    select
        entity_id,
        type_name

    from selected_types

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
