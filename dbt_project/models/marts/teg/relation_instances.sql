{{ config(materialized='view') }}
-- Provenance: each relation instance of the graph with its sentence. A view: it is only read by
-- ad-hoc queries (sql/supporting_sentences.sql) and would copy every instance as a table.
with

instances as (

    select * from {{ ref('int_relation_instances') }}

),

sentences as (

    select * from {{ ref('stg_extract__sentences') }}

),

final as (

    select
        instances.instance_id,
        instances.rel_id,
        instances.arg1_entity_id,
        instances.arg2_entity_id,
        instances.sentence_id,
        sentences.document_id,
        sentences.line_number,
        sentences.sentence_text

    from instances
    left join sentences
        on instances.sentence_id = sentences.sentence_id

)

select * from final
