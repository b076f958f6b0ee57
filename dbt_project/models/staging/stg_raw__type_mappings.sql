with

source as (

    select * from {{ source('raw', 'type_mappings') }}

),

loaded_batches as (

    select batch_id from {{ ref('stg_raw__load_batches') }}
    where is_loaded

),

renamed as (

    select distinct
        source.source_type,
        source.target_type

    from source
    inner join loaded_batches
        on source.batch_id = loaded_batches.batch_id

)

select * from renamed
