with

source as (

    select * from {{ source('extract', 'load_batches') }}

),

renamed as (

    select
        batch_id,
        source_file,
        source_format,
        kind,
        status,
        status = 'loaded' as is_loaded,
        n_instances,
        started_at,
        finished_at

    from source

)

select * from renamed
