with

source as (

    select * from {{ source('extract', 'sentences') }}

),

renamed as (

    select
        sentence_id,
        batch_id,
        document_id,
        line_number,
        sentence_index,
        text as sentence_text

    from source

)

select * from renamed
