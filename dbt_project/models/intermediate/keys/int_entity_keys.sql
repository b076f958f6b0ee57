{{ config(
    materialized=incremental_materialization(),
    unique_key='entity_id',
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- E: every entity that is an argument of a loaded relation instance, with a compact integer key,
-- numbered by the first batch the entity occurs in, then by source id.
-- Integer keys early: every later join and group-by runs on 4-byte ints instead of text ids.
-- Counted from int_source_pairs (each pair's instances count once per argument).
-- Incremental: the arguments of the new batches (macro keys_numbered_by_first_batch).
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
arg1_pairs as (

    select * from {{ ref('int_source_pairs') }}

),

arg2_pairs as (

    select * from {{ ref('int_source_pairs') }}

),

arguments as (

    select
        arg1_entity_id as source_entity_id,
        first_batch_id,
        n_instances

    from arg1_pairs

    union all

    select
        arg2_entity_id as source_entity_id,
        first_batch_id,
        n_instances

    from arg2_pairs

),

counted as (

    select
        source_entity_id,
        min(first_batch_id) as first_batch_id,
        sum(n_instances) as n_instances

    from arguments
    group by source_entity_id

),

{{ keys_numbered_by_first_batch('counted', 'source_entity_id', 'entity_id') }}

select * from keyed
