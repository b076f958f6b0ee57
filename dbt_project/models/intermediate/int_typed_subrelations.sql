{{ config(post_hook="{{ analyze_table() }}") }}
-- Paper §2.2: typed relations R_{s,u} for s, u among the ranked slot types (⊤ matches everything),
-- kept when |R_{s,u}| ≥ r_min. typed_rel_id is global; tsg_index is SherLIiC's per-relation type id
-- (0-based, by slot-1 rank then slot-2 rank).
with

matches as (

    select * from {{ ref('int_typed_pair_matches') }}

),

sized as (

    select
        rel_id,
        type_a,
        type_b,
        type_rank_a,
        type_rank_b,
        count(*) as n_entity_pairs,
        sum(n_instances) as n_instances,
        count(distinct arg1_entity_id) as n_arg1_entities,
        count(distinct arg2_entity_id) as n_arg2_entities

    from matches
    group by
        rel_id,
        type_a,
        type_b,
        type_rank_a,
        type_rank_b
    having count(*) >= {{ var('r_min') }}

),

keyed as (

    select
        cast(row_number() over (order by rel_id, type_rank_a, type_rank_b) as integer) as typed_rel_id,
        rel_id,
        type_a,
        type_b,
        type_rank_a,
        type_rank_b,
        cast(row_number() over (partition by rel_id order by type_rank_a, type_rank_b) - 1 as integer)
            as tsg_index,
        cast(n_entity_pairs as bigint) as n_entity_pairs,
        cast(n_instances as bigint) as n_instances,
        cast(n_arg1_entities as bigint) as n_arg1_entities,
        cast(n_arg2_entities as bigint) as n_arg2_entities

    from sized

)

select * from keyed
