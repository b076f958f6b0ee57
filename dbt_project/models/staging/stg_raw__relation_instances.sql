with

source as (

    select * from {{ source('raw', 'relation_instances') }}

),

loaded_batches as (

    select batch_id from {{ ref('stg_raw__load_batches') }}
    where is_loaded

),

renamed as (

    select
        source.instance_id,
        source.batch_id,
        source.sentence_id,
        source.path,
        source.arg1_entity_id,
        source.arg2_entity_id,
        source.subject_side

    from source
    inner join loaded_batches
        on source.batch_id = loaded_batches.batch_id

)

select * from renamed
