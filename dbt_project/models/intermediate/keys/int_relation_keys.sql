{{ config(pre_hook=["{{ analyze_sources() }}", "{{ heavy_model_settings() }}"], post_hook="{{ analyze_table() }}") }}
-- Relations (canonical paths) with a compact integer key, numbered by the first batch a path occurs in,
-- then by path: a batch added later only appends ids, so a build that adds it gives every older
-- relation the id a build from scratch gives it.
with

instances as (

    select
        batch_id,
        path

    from {{ ref('int_loaded_relation_instances') }}

),

counted as (

    select
        path,
        min(batch_id) as first_batch_id,
        count(*) as n_instances

    from instances
    group by path

),

keyed as (

    select
        cast(row_number() over (order by first_batch_id, path) as integer) as rel_id,
        path,
        first_batch_id,
        n_instances

    from counted

)

select * from keyed
