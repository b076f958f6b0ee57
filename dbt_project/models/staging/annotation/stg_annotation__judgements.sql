with

source as (

    select * from {{ source('annotation', 'annotation_judgements') }}

),

renamed as (

    select
        judgement_id,
        item_id,
        worker_id,
        task,
        answer,
        premise_meaningful,
        hypothesis_meaningful,
        source as judgement_source,
        source_line,
        created_at

    from source

)

select * from renamed
