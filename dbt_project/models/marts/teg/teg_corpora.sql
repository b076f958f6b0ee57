-- The corpora this build of the graph was built from (var corpora): one row per corpus with a batch in
-- the build (int_build_batches); counts as the loader recorded them.
with

build_batches as (

    select * from {{ ref('int_build_batches') }}

),

corpus_batches as (

    select
        corpus_name,
        batch_id,
        n_documents,
        n_instances,
        finished_at

    from build_batches
    where kind = 'corpus'

),

corpora as (

    select
        corpus_name,
        count(*) as batches,
        sum(n_documents) as documents,
        sum(n_instances) as relation_instances,
        max(finished_at) as last_loaded_at

    from corpus_batches
    group by corpus_name

),

final as (

    select
        corpus_name,
        cast(batches as bigint) as batches,
        cast(documents as bigint) as documents,
        cast(relation_instances as bigint) as relation_instances,
        last_loaded_at,
        current_timestamp as built_at

    from corpora

)

select * from final
