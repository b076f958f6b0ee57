{{ config(
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
{%- set plan = build_plan() %}
-- depends_on: {{ ref('int_build_plan') }}
-- The instances this build adds (every loaded batch in a full build, the new batches in an incremental
-- one) counted per (path, arg1, arg2) on their text ids. The keys models count paths and entities from
-- these pairs and int_relation_pairs keys them, so the 5M-row instance table is read and grouped once.
-- One process although it runs alone: most pairs occur once, so parallel workers' partial groups hardly
-- merge (5M instances → 2.95M partial groups → 2.6M pairs) and the leader groups them all again alone (at
-- 5M, three builds each: 7.3-9.6 s serial, 8.3-10.2 s with two workers and 40 % more CPU).
with

instances as (

    select * from {{ ref('int_loaded_relation_instances') }}
    {%- if plan.incremental %}
    where batch_id > {{ plan.previous_max_batch_id }}
    {%- endif %}

),

source_pairs as (

    select
        path,
        arg1_entity_id,
        arg2_entity_id,
        -- an integer: sums of integers aggregate in a bigint, sums of bigints in numeric (slower)
        cast(count(*) as integer) as n_instances,
        min(batch_id) as first_batch_id

    from instances
    group by
        path,
        arg1_entity_id,
        arg2_entity_id

)

select * from source_pairs
