{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Paper §2.2: typed relations R_{s,u} for s, u among the ranked slot types (⊤ matches everything),
-- kept when |R_{s,u}| ≥ r_min. typed_rel_id is global; tsg_index is SherLIiC's per-relation type id
-- (0-based, by slot-1 rank then slot-2 rank).
with

matches as (

    select * from {{ ref('int_typed_pair_matches') }}

),

slot_types as (

    select * from {{ ref('int_slot_types_ranked') }}

),

sized as (

    select
        rel_id,
        type_rank_a,
        type_rank_b,
        count(*) as n_entity_pairs,
        sum(n_instances) as n_instances,
        count(distinct arg1_entity_id) as n_arg1_entities,
        count(distinct arg2_entity_id) as n_arg2_entities

    from matches
    group by
        rel_id,
        type_rank_a,
        type_rank_b
    having count(*) >= {{ var('r_min') }}

),

keyed as (

    select
        cast(row_number() over (
            order by sized.rel_id, sized.type_rank_a, sized.type_rank_b
        ) as integer) as typed_rel_id,
        sized.rel_id,
        slot1.type_name as type_a,
        slot2.type_name as type_b,
        sized.type_rank_a,
        sized.type_rank_b,
        cast(row_number() over (
            partition by sized.rel_id
            order by sized.type_rank_a, sized.type_rank_b
        ) - 1 as integer) as tsg_index,
        cast(sized.n_entity_pairs as bigint) as n_entity_pairs,
        cast(sized.n_instances as bigint) as n_instances,
        cast(sized.n_arg1_entities as bigint) as n_arg1_entities,
        cast(sized.n_arg2_entities as bigint) as n_arg2_entities

    from sized
    inner join slot_types as slot1
        on sized.rel_id = slot1.rel_id
        and slot1.slot = 1
        and sized.type_rank_a = slot1.type_rank
    inner join slot_types as slot2
        on sized.rel_id = slot2.rel_id
        and slot2.slot = 2
        and sized.type_rank_b = slot2.type_rank

)

select * from keyed
