with

source as (

    select * from {{ source('extract', 'relation_instances') }}

),

renamed as (

    select
        instance_id,
        batch_id,
        sentence_id,
        path,
        arg1_entity_id,
        arg2_entity_id,
        subject_side

    from source

)

select * from renamed
