with

source as (

    select * from {{ source('extract', 'entity_types') }}

),

renamed as (

    select
        batch_id,
        entity_id,
        type_name,
        type_source

    from source

)

select * from renamed
