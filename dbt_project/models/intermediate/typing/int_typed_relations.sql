{{ config(
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- Paper §2.2: typed relations R_{s,u} for s, u among the ranked slot types (⊤ matches everything),
-- kept when |R_{s,u}| ≥ r_min (sizes from int_typing_sizes). typed_rel_id is global, a function of
-- (rel_id, type_rank of s, type_rank of u) (macro typed_relation_id; type_rank is the type's place by
-- name); tsg_index is SherLIiC's per-relation type id (0-based, by slot-1 count rank then slot-2 count
-- rank, the paper's order). Built in full in every build (an incremental path saved nothing measurable).
with

typing_sizes as (

    select * from {{ ref('int_typing_sizes') }}

),

slot1_ranks as (

    select * from {{ ref('int_slot_types_ranked') }}
    where slot = 1

),

slot2_ranks as (

    select * from {{ ref('int_slot_types_ranked') }}
    where slot = 2

),

kept as (

    select * from typing_sizes
    where n_entity_pairs >= {{ var('r_min') }}

),

ranked as (

    select
        kept.*,
        slot1_ranks.count_rank as count_rank_a,
        slot2_ranks.count_rank as count_rank_b

    from kept
    inner join slot1_ranks
        on kept.rel_id = slot1_ranks.rel_id
        and kept.type_rank_a = slot1_ranks.type_rank
    inner join slot2_ranks
        on kept.rel_id = slot2_ranks.rel_id
        and kept.type_rank_b = slot2_ranks.type_rank

),

keyed as (

    select
        {{ typed_relation_id('rel_id', 'type_rank_a', 'type_rank_b') }} as typed_rel_id,
        rel_id,
        type_a,
        type_b,
        type_rank_a,
        type_rank_b,
        cast(row_number() over (
            partition by rel_id
            order by count_rank_a, count_rank_b
        ) - 1 as integer) as tsg_index,
        n_entity_pairs,
        n_instances,
        n_arg1_entities,
        n_arg2_entities

    from ranked

)

select * from keyed
