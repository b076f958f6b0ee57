with

source as (

    select * from {{ source('extract', 'entities') }}

),

renamed as (

    select
        batch_id,
        entity_id,
        entity_name

    from source

)

select * from renamed
