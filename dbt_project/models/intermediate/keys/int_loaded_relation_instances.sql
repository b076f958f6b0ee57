{{ config(materialized='view') }}
-- The relation instances the graph is built from: those of the build's batches (a view: the keys
-- models read it once each).
with

instances as (

    select * from {{ ref('stg_extract__relation_instances') }}

),

build_batches as (

    select * from {{ ref('int_build_batches') }}

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
    inner join build_batches
        on instances.batch_id = build_batches.batch_id

)

select * from loaded
