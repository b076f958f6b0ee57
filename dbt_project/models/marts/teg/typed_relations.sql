{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
with

typed_relations as (

    select * from {{ ref('int_typed_relations') }}

),

signatures as (

    select * from {{ ref('int_type_signatures') }}

),

relation_keys as (

    select * from {{ ref('int_relation_keys') }}

),

final as (

    select
        typed_relations.typed_rel_id,
        typed_relations.rel_id,
        relation_keys.path,
        typed_relations.type_a,
        typed_relations.type_b,
        signatures.tsg_a,
        signatures.tsg_b,
        typed_relations.tsg_index,
        typed_relations.n_entity_pairs,
        typed_relations.n_instances,
        typed_relations.n_arg1_entities,
        typed_relations.n_arg2_entities,
        {{ surrogate_key(['relation_keys.path', 'typed_relations.type_a', 'typed_relations.type_b']) }}
            as typed_relation_key

    from typed_relations
    inner join signatures
        on typed_relations.typed_rel_id = signatures.typed_rel_id
    inner join relation_keys
        on typed_relations.rel_id = relation_keys.rel_id

)

select * from final
