{{ config(post_hook="{{ analyze_table() }}") }}
with

relation_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),

final as (

    select
        rel_id,
        arg1_entity_id,
        arg2_entity_id,
        cast(n_instances as bigint) as n_instances

    from relation_pairs

)

select * from final
