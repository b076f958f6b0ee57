{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Relation instances on integer keys (provenance: instance -> sentence).
with

instances as (

    select * from {{ ref('int_loaded_relation_instances') }}

),

relation_keys as (

    select * from {{ ref('int_relation_keys') }}

),

entity_keys as (

    select * from {{ ref('int_entity_keys') }}

),

keyed as (

    select
        instances.instance_id,
        instances.sentence_id,
        relation_keys.rel_id,
        arg1_keys.entity_id as arg1_entity_id,
        arg2_keys.entity_id as arg2_entity_id

    from instances
    inner join relation_keys
        on instances.path = relation_keys.path
    inner join entity_keys as arg1_keys
        on instances.arg1_entity_id = arg1_keys.source_entity_id
    inner join entity_keys as arg2_keys
        on instances.arg2_entity_id = arg2_keys.source_entity_id

)

select * from keyed
