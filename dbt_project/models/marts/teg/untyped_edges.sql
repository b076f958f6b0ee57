{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'arg1_entity_id', 'arg2_entity_id'],
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
-- Incremental: the pairs that are new or whose count changed (int_relation_pairs' changed rows).
with

relation_pairs as (

    select * from {{ changed_rows(ref('int_relation_pairs')) }}

),

-- the relation keys of the relations mart, computed here so that this mart need not wait for it
relations as (

    select
        rel_id,
        {{ relation_key('path') }} as relation_key

    from {{ ref('int_relation_keys') }}

),

-- one import CTE per use (Postgres materialises a CTE that is read twice)
arg1_keys as (

    select * from {{ ref('int_entity_keys') }}

),

arg2_keys as (

    select * from {{ ref('int_entity_keys') }}

),

final as (

    select
        relation_pairs.rel_id,
        relation_pairs.arg1_entity_id,
        relation_pairs.arg2_entity_id,
        cast(relation_pairs.n_instances as bigint) as n_instances,
        {{ surrogate_key([
            'relations.relation_key',
            'arg1_keys.source_entity_id',
            'arg2_keys.source_entity_id',
        ]) }} as edge_key

    from relation_pairs
    inner join relations
        on relation_pairs.rel_id = relations.rel_id
    inner join arg1_keys
        on relation_pairs.arg1_entity_id = arg1_keys.entity_id
    inner join arg2_keys
        on relation_pairs.arg2_entity_id = arg2_keys.entity_id

)

select * from final
