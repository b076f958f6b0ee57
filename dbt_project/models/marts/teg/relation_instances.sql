{{ config(materialized='view') }}
-- depends_on: {{ ref('int_build_plan') }}
-- Provenance: each relation instance of the graph with its sentence. A view: it is only read by
-- ad-hoc queries (sql/supporting_sentences.sql), so the build does not copy every instance; the keys
-- are looked up when it is read. In an incremental build it reads the live keys, which the build
-- updates in place when it is published (macros/atomic_publish.sql).
with

instances as (

    select * from {{ ref('int_loaded_relation_instances') }}

),

relation_keys as (

    select * from {{ ref('int_relation_keys') }}

),

-- one import CTE per use
arg1_keys as (

    select * from {{ ref('int_entity_keys') }}

),

arg2_keys as (

    select * from {{ ref('int_entity_keys') }}

),

sentences as (

    select * from {{ ref('stg_extract__sentences') }}

),

final as (

    select
        instances.instance_id,
        relation_keys.rel_id,
        arg1_keys.entity_id as arg1_entity_id,
        arg2_keys.entity_id as arg2_entity_id,
        instances.sentence_id,
        sentences.document_id,
        sentences.line_number,
        sentences.sentence_text

    from instances
    inner join relation_keys
        on instances.path = relation_keys.path
    inner join arg1_keys
        on instances.arg1_entity_id = arg1_keys.source_entity_id
    inner join arg2_keys
        on instances.arg2_entity_id = arg2_keys.source_entity_id
    left join sentences
        on instances.sentence_id = sentences.sentence_id

)

select * from final
