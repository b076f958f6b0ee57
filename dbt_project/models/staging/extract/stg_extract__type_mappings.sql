with

source as (

    select * from {{ source('extract', 'type_mappings') }}

),

renamed as (

    select
        batch_id,
        source_type,
        target_type

    from source

)

select * from renamed
