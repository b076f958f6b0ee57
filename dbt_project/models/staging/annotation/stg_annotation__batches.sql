with

source as (

    select * from {{ source('annotation', 'annotation_batches') }}

),

renamed as (

    select
        batch_name,
        task,
        seed,
        stratify_by,
        n_items,
        created_at

    from source

)

select * from renamed
