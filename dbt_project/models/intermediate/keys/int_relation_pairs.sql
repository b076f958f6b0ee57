{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'arg1_entity_id', 'arg2_entity_id'],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- Untyped relation extensions: R as a set of entity pairs, with the number of instances of each pair
-- and the first batch it occurs in. Instances are counted per (path, arguments) on the loaded text
-- ids first (int_source_pairs) and keyed afterwards: each pair is looked up once instead of each instance.
-- Incremental: the pairs of the new batches, their counts added to the previous ones (first_batch_id
-- tells later models which pairs are new to the graph).
with

source_pairs as (

    select * from {{ ref('int_source_pairs') }}

),

relation_keys as (

    select * from {{ ref('int_relation_keys') }}

),

-- one import CTE per use (Postgres materialises a CTE that is read twice)
arg1_keys as (

    select * from {{ ref('int_entity_keys') }}

),

arg2_keys as (

    select * from {{ ref('int_entity_keys') }}

),

keyed as (

    select
        relation_keys.rel_id,
        arg1_keys.entity_id as arg1_entity_id,
        arg2_keys.entity_id as arg2_entity_id,
        source_pairs.n_instances,
        source_pairs.first_batch_id

    from source_pairs
    inner join relation_keys
        on source_pairs.path = relation_keys.path
    inner join arg1_keys
        on source_pairs.arg1_entity_id = arg1_keys.source_entity_id
    inner join arg2_keys
        on source_pairs.arg2_entity_id = arg2_keys.source_entity_id

),

{% if is_incremental() %}
previous_pairs as (

    select * from {{ previous_build(this) }}

),

final as (

    select
        keyed.rel_id,
        keyed.arg1_entity_id,
        keyed.arg2_entity_id,
        -- integers both (int_source_pairs counts in an integer), so the sum stays one
        coalesce(previous_pairs.n_instances, 0) + keyed.n_instances as n_instances,
        coalesce(previous_pairs.first_batch_id, keyed.first_batch_id) as first_batch_id

    from keyed
    left join previous_pairs
        on keyed.rel_id = previous_pairs.rel_id
        and keyed.arg1_entity_id = previous_pairs.arg1_entity_id
        and keyed.arg2_entity_id = previous_pairs.arg2_entity_id

)
{% else %}
final as (

    select * from keyed

)
{% endif %}

select * from final
