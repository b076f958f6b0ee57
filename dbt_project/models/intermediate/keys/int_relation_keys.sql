{{ config(
    materialized=incremental_materialization(),
    unique_key='rel_id',
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
{%- set plan = build_plan() %}
-- depends_on: {{ ref('int_build_plan') }}
-- Relations (canonical paths) with a compact integer key, numbered by the first batch a path occurs in,
-- then by path: a batch added later only appends ids, so a build that adds it gives every older
-- relation the id a build from scratch gives it.
-- Counted from int_source_pairs (the instances this build adds, grouped per pair).
-- Incremental: the paths of the new batches, their counts added to the previous ones; new paths get
-- the next ids (the plan ensures new batches come after every previous one).
with

source_pairs as (

    select * from {{ ref('int_source_pairs') }}

),

counted as (

    select
        path,
        min(first_batch_id) as first_batch_id,
        sum(n_instances) as n_instances

    from source_pairs
    group by path

),

{% if plan.incremental %}
previous_keys as (

    select * from {{ previous_relation(this) }}

),

previous_bounds as (

    select coalesce(max(rel_id), 0) as max_rel_id
    from previous_keys

),

updated as (

    select
        previous_keys.rel_id,
        counted.path,
        coalesce(previous_keys.first_batch_id, counted.first_batch_id) as first_batch_id,
        coalesce(previous_keys.n_instances, 0) + counted.n_instances as n_instances

    from counted
    left join previous_keys
        on counted.path = previous_keys.path

),

keyed as (

    select
        coalesce(
            updated.rel_id,
            cast(previous_bounds.max_rel_id + row_number() over (
                partition by updated.rel_id is null
                order by updated.first_batch_id, updated.path
            ) as integer)
        ) as rel_id,
        updated.path,
        updated.first_batch_id,
        updated.n_instances

    from updated
    cross join previous_bounds

)
{% else %}
keyed as (

    select
        cast(row_number() over (order by first_batch_id, path) as integer) as rel_id,
        path,
        first_batch_id,
        n_instances

    from counted

)
{% endif %}

select * from keyed
