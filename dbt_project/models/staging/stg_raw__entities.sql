with

source as (

    select * from {{ source('raw', 'entities') }}

),

loaded_batches as (

    select batch_id from {{ ref('stg_raw__load_batches') }}
    where is_loaded

),

renamed as (

    select
        source.batch_id,
        source.entity_id,
        source.entity_name

    from source
    inner join loaded_batches
        on source.batch_id = loaded_batches.batch_id

)

select * from renamed
