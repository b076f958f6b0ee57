{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Untyped relation extensions: R as a set of entity pairs, with the number of instances of each pair.
with

instances as (

    select * from {{ ref('int_relation_instances') }}

),

pairs as (

    select
        rel_id,
        arg1_entity_id,
        arg2_entity_id,
        count(*) as n_instances

    from instances
    group by
        rel_id,
        arg1_entity_id,
        arg2_entity_id

)

select * from pairs
