{{ config(materialized='view') }}
-- The relation instances the graph is built from: those of loaded batches (a view, as the staging
-- model it filters was: the keys models read it once each).
with

instances as (

    select * from {{ ref('stg_extract__relation_instances') }}

),

load_batches as (

    select * from {{ ref('stg_extract__load_batches') }}

),

loaded as (

    select
        instances.instance_id,
        instances.batch_id,
        instances.sentence_id,
        instances.path,
        instances.arg1_entity_id,
        instances.arg2_entity_id,
        instances.subject_side

    from instances
    inner join load_batches
        on instances.batch_id = load_batches.batch_id
    where load_batches.is_loaded

)

select * from loaded
