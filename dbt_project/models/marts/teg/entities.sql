{{ config(
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
-- The entities of the graph: name (the smallest one of all batches), types and instances. Built in
-- full in every build: an incremental path saved about a second (docs/performance.md).
with

entity_keys as (

    select * from {{ ref('int_entity_keys') }}

),

entity_names as (

    select * from {{ ref('stg_extract__entities') }}

),

build_batches as (

    select * from {{ ref('int_build_batches') }}

),

entity_types as (

    select * from {{ ref('int_entity_types') }}

),

names as (

    select
        entity_names.entity_id as source_entity_id,
        min(entity_names.entity_name) as entity_name

    from entity_names
    inner join build_batches
        on entity_names.batch_id = build_batches.batch_id
    group by entity_names.entity_id

),

types as (

    select
        entity_id,
        {{ sorted_set_agg('type_name') }} as types

    from entity_types
    group by entity_id

),

final as (

    select
        entity_keys.entity_id,
        entity_keys.source_entity_id,
        coalesce(names.entity_name, entity_keys.source_entity_id) as entity_name,
        coalesce(types.types, {{ empty_text_array() }}) as types,
        cast(entity_keys.n_instances as bigint) as n_instances,
        {{ surrogate_key(['entity_keys.source_entity_id']) }} as entity_key

    from entity_keys
    left join names
        on entity_keys.source_entity_id = names.source_entity_id
    left join types
        on entity_keys.entity_id = types.entity_id

)

select * from final
