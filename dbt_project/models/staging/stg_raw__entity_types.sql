-- τ(e) as loaded: rows of loaded batches whose type_source is selected by the var type_sources
-- (default null = all sources). Mapping (var map_types) happens in int_entity_types.
with

source as (

    select * from {{ source('raw', 'entity_types') }}

),

loaded_batches as (

    select batch_id from {{ ref('stg_raw__load_batches') }}
    where is_loaded

),

renamed as (

    select
        source.batch_id,
        source.entity_id,
        source.type_name,
        source.type_source

    from source
    inner join loaded_batches
        on source.batch_id = loaded_batches.batch_id
    where {{ type_sources_filter('source.type_source') }}

)

select * from renamed
