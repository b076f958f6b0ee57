{{ config(post_hook="{{ analyze_table() }}") }}
-- The batches this build reads, fixed when the build starts: every loaded batch of the selected corpora
-- (var corpora) and every loaded type table and type map (benchmark and annotation batches are not
-- part of the graph). Every model of the graph reaches raw rows
-- through this table, so a batch that finishes loading while the build runs is left to the next build
-- instead of being seen by some models and not by others.
with

load_batches as (

    select * from {{ ref('stg_extract__load_batches') }}

),

final as (

    select
        batch_id,
        kind,
        corpus_name,
        source_file,
        source_format,
        n_documents,
        n_instances,
        finished_at

    from load_batches
    where is_loaded
        and kind in ('corpus', 'types', 'type_map')

)

select * from final
