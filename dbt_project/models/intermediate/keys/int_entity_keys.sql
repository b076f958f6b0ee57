{{ config(
    materialized=incremental_materialization(),
    unique_key='entity_id',
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
{%- set plan = build_plan() %}
-- depends_on: {{ ref('int_build_plan') }}
-- E: every entity that is an argument of a loaded relation instance, with a compact integer key,
-- numbered by the first batch the entity occurs in, then by source id (see int_relation_keys).
-- Integer keys early: every later join and group-by runs on 4-byte ints instead of text ids.
-- Counted from int_source_pairs (each pair's instances count once per argument).
-- Incremental: the arguments of the new batches, as in int_relation_keys.
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
arg1_pairs as (

    select * from {{ ref('int_source_pairs') }}

),

arg2_pairs as (

    select * from {{ ref('int_source_pairs') }}

),

arguments as (

    select
        arg1_entity_id as source_entity_id,
        first_batch_id,
        n_instances

    from arg1_pairs

    union all

    select
        arg2_entity_id as source_entity_id,
        first_batch_id,
        n_instances

    from arg2_pairs

),

counted as (

    select
        source_entity_id,
        min(first_batch_id) as first_batch_id,
        sum(n_instances) as n_instances

    from arguments
    group by source_entity_id

),

{% if plan.incremental %}
previous_keys as (

    select * from {{ previous_relation(this) }}

),

previous_bounds as (

    select coalesce(max(entity_id), 0) as max_entity_id
    from previous_keys

),

updated as (

    select
        previous_keys.entity_id,
        counted.source_entity_id,
        coalesce(previous_keys.first_batch_id, counted.first_batch_id) as first_batch_id,
        coalesce(previous_keys.n_instances, 0) + counted.n_instances as n_instances

    from counted
    left join previous_keys
        on counted.source_entity_id = previous_keys.source_entity_id

),

keyed as (

    select
        coalesce(
            updated.entity_id,
            cast(previous_bounds.max_entity_id + row_number() over (
                partition by updated.entity_id is null
                order by updated.first_batch_id, updated.source_entity_id
            ) as integer)
        ) as entity_id,
        updated.source_entity_id,
        updated.first_batch_id,
        updated.n_instances

    from updated
    cross join previous_bounds

)
{% else %}
keyed as (

    select
        cast(row_number() over (order by first_batch_id, source_entity_id) as integer) as entity_id,
        source_entity_id,
        first_batch_id,
        n_instances

    from counted

)
{% endif %}

select * from keyed
