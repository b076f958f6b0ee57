{{ config(
    materialized=incremental_materialization(),
    unique_key='rel_id',
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- Relations (canonical paths) with a compact integer key, numbered by the first batch a path occurs in,
-- then by path: a batch added later only appends ids, so a build that adds it gives every older
-- relation the id a build from scratch gives it.
-- Counted from int_source_pairs (the instances this build adds, grouped per pair).
-- Incremental: the paths of the new batches, their counts added to the previous ones; new paths get
-- the next ids (macro keys_numbered_by_first_batch; the plan ensures new batches come after every
-- previous one).
with

source_pairs as (

    select * from {{ ref('int_source_pairs') }}

),

counted as (

    select
        path,
        min(first_batch_id) as first_batch_id,
        sum(n_instances) as n_instances

    from source_pairs
    group by path

),

{{ keys_numbered_by_first_batch('counted', 'path', 'rel_id') }}

select * from keyed
