{{ config(pre_hook=["{{ analyze_sources() }}", "{{ heavy_model_settings() }}"], post_hook="{{ analyze_table() }}") }}
-- E: every entity that is an argument of a loaded relation instance, with a compact integer key,
-- numbered by the first batch the entity occurs in, then by source id (see int_relation_keys).
-- Integer keys early: every later join and group-by runs on 4-byte ints instead of text ids.
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
arg1_instances as (

    select
        batch_id,
        arg1_entity_id

    from {{ ref('int_loaded_relation_instances') }}

),

arg2_instances as (

    select
        batch_id,
        arg2_entity_id

    from {{ ref('int_loaded_relation_instances') }}

),

arguments as (

    select
        arg1_entity_id as source_entity_id,
        batch_id

    from arg1_instances

    union all

    select
        arg2_entity_id as source_entity_id,
        batch_id

    from arg2_instances

),

counted as (

    select
        source_entity_id,
        min(batch_id) as first_batch_id,
        count(*) as n_instances

    from arguments
    group by source_entity_id

),

keyed as (

    select
        cast(row_number() over (order by first_batch_id, source_entity_id) as integer) as entity_id,
        source_entity_id,
        first_batch_id,
        n_instances

    from counted

)

select * from keyed
