{{ config(post_hook="{{ analyze_table() }}") }}
with

typed_pairs as (

    select * from {{ ref('int_typed_relation_pairs') }}

),

final as (

    select
        typed_rel_id,
        rel_id,
        arg1_entity_id,
        arg2_entity_id,
        cast(n_instances as bigint) as n_instances

    from typed_pairs

)

select * from final
