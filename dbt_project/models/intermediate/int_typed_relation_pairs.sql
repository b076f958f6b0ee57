{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Members of the kept typed relations (the TEG's edges).
with

matches as (

    select * from {{ ref('int_typed_pair_matches') }}

),

typed_relations as (

    select * from {{ ref('int_typed_subrelations') }}

),

members as (

    select
        typed_relations.typed_rel_id,
        matches.rel_id,
        matches.arg1_entity_id,
        matches.arg2_entity_id,
        matches.n_instances

    from matches
    inner join typed_relations
        on matches.rel_id = typed_relations.rel_id
        and matches.type_rank_a = typed_relations.type_rank_a
        and matches.type_rank_b = typed_relations.type_rank_b

)

select * from members
