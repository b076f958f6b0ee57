{{ config(
    materialized=incremental_materialization(),
    unique_key='entity_id',
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
-- Incremental: the entities that are new or occur in new instances, and those a new batch names
-- otherwise than the previous build did (the name is the smallest one of all batches); the types of an
-- entity already in the graph do not change.
with

{% if is_incremental() %}
changed_keys as (

    select * from {{ changed_rows(ref('int_entity_keys')) }}

),

new_names as (

    select * from {{ ref('stg_extract__entities') }}
    where batch_id > {{ previous_max_batch_id() }}

),

previous_entities as (

    select * from {{ previous_build(this) }}

),

renamed_entities as (

    select distinct new_names.entity_id as source_entity_id

    from new_names
    inner join previous_entities
        on new_names.entity_id = previous_entities.source_entity_id
    where new_names.entity_name <> previous_entities.entity_name

),

entity_keys as (

    select * from {{ ref('int_entity_keys') }}
    where entity_id in (select changed_keys.entity_id from changed_keys)
        or source_entity_id in (select renamed_entities.source_entity_id from renamed_entities)

),
{% else %}
entity_keys as (

    select * from {{ ref('int_entity_keys') }}

),
{% endif %}

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
    {%- if is_incremental() %}
    where entity_names.entity_id in (select entity_keys.source_entity_id from entity_keys)
    {%- endif %}
    group by entity_names.entity_id

),

types as (

    select
        entity_id,
        {{ sorted_set_agg('type_name') }} as types

    from entity_types
    {%- if is_incremental() %}
    where entity_id in (select entity_keys.entity_id from entity_keys)
    {%- endif %}
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
