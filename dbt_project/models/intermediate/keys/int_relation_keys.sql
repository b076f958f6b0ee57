{{ config(pre_hook=["{{ analyze_sources() }}", "{{ heavy_model_settings() }}"], post_hook="{{ analyze_table() }}") }}
-- Relations (canonical paths) with a compact integer key.
with

instances as (

    select path from {{ ref('int_loaded_relation_instances') }}

),

counted as (

    select
        path,
        count(*) as n_instances

    from instances
    group by path

),

keyed as (

    select
        cast(row_number() over (order by path) as integer) as rel_id,
        path,
        n_instances

    from counted

)

select * from keyed
