-- Load batches with an is_loaded flag, restricted to the corpora the graph is built from (var corpora;
-- other kinds of batch always stay): every model reaches raw rows through an inner join with this one,
-- so an unselected corpus is invisible downstream.
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
        corpus_name,
        status,
        status = 'loaded' as is_loaded,
        n_documents,
        n_instances,
        started_at,
        finished_at

    from source

),

selected as (

    select * from renamed
    where {{ selected_corpora_filter('kind', 'corpus_name') }}

)

select * from selected
