with

source as (

    select * from {{ source('raw', 'sentences') }}

),

loaded_batches as (

    select batch_id from {{ ref('stg_raw__load_batches') }}
    where is_loaded

),

renamed as (

    select
        source.sentence_id,
        source.batch_id,
        source.document_id,
        source.line_number,
        source.sentence_index,
        source.text as sentence_text

    from source
    inner join loaded_batches
        on source.batch_id = loaded_batches.batch_id

)

select * from renamed
