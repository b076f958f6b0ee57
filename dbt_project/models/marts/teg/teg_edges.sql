{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
with

typed_pairs as (

    select * from {{ ref('int_typed_relation_pairs') }}

),

typed_relations as (

    select * from {{ ref('typed_relations') }}

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
        typed_pairs.typed_rel_id,
        typed_pairs.rel_id,
        typed_pairs.arg1_entity_id,
        typed_pairs.arg2_entity_id,
        cast(typed_pairs.n_instances as bigint) as n_instances,
        {{ surrogate_key([
            'typed_relations.typed_relation_key',
            'arg1_keys.source_entity_id',
            'arg2_keys.source_entity_id',
        ]) }} as edge_key

    from typed_pairs
    inner join typed_relations
        on typed_pairs.typed_rel_id = typed_relations.typed_rel_id
    inner join arg1_keys
        on typed_pairs.arg1_entity_id = arg1_keys.entity_id
    inner join arg2_keys
        on typed_pairs.arg2_entity_id = arg2_keys.entity_id

)

select * from final
