{{ config(pre_hook=["{{ analyze_sources() }}", "{{ heavy_model_settings() }}"], post_hook="{{ analyze_table() }}") }}
-- E: every entity that is an argument of a loaded relation instance, with a compact integer key.
-- Integer keys early: every later join and group-by runs on 4-byte ints instead of text ids.
with

instances as (

    select
        arg1_entity_id,
        arg2_entity_id

    from {{ ref('int_loaded_relation_instances') }}

),

arguments as (

    select arg1_entity_id as source_entity_id from instances
    union all
    select arg2_entity_id as source_entity_id from instances

),

counted as (

    select
        source_entity_id,
        count(*) as n_instances

    from arguments
    group by source_entity_id

),

keyed as (

    select
        cast(row_number() over (order by source_entity_id) as integer) as entity_id,
        source_entity_id,
        n_instances

    from counted

)

select * from keyed
