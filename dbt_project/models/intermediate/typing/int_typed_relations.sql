{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Paper §2.2: typed relations R_{s,u} for s, u among the ranked slot types (⊤ matches everything),
-- kept when |R_{s,u}| ≥ r_min. typed_rel_id is global, a function of (rel_id, rank of s, rank of u)
-- (macro typed_relation_id); tsg_index is SherLIiC's per-relation type id (0-based, by slot-1 rank then
-- slot-2 rank). Sizes and projections are summed over count classes, not over (pair, typing) rows:
-- pairs with equal masks (int_relation_pair_typings) give |R_{s,u}| and its instances, slot entities
-- with equal own and partners' masks (int_slot_entity_classes) give |π1| and |π2|.
with

slot1_types as (

    select * from {{ ref('int_slot_types_ranked') }}
    where slot = 1

),

slot2_types as (

    select * from {{ ref('int_slot_types_ranked') }}
    where slot = 2

),

pair_typings as (

    select * from {{ ref('int_relation_pair_typings') }}

),

slot_entity_classes as (

    select * from {{ ref('int_slot_entity_classes') }}

),

-- a typing (s, u) holds the pairs of the classes whose arg1_mask has bit s-1 and arg2_mask bit u-1, the
-- first arguments of the classes with s in their own and u in their partners' mask, the second
-- arguments of those with u in their own and s in their partners' mask
count_classes as (

    select
        rel_id,
        arg1_mask,
        arg2_mask,
        cast(count(*) as integer) as n_pairs,
        sum(n_instances) as n_instances,
        0 as n_arg1_entities,
        0 as n_arg2_entities

    from pair_typings
    group by
        rel_id,
        arg1_mask,
        arg2_mask

    union all

    select
        rel_id,
        case when slot = 1 then type_mask else partner_mask end as arg1_mask,
        case when slot = 1 then partner_mask else type_mask end as arg2_mask,
        0 as n_pairs,
        0 as n_instances,
        cast(case when slot = 1 then count(*) else 0 end as integer) as n_arg1_entities,
        cast(case when slot = 2 then count(*) else 0 end as integer) as n_arg2_entities

    from slot_entity_classes
    group by
        rel_id,
        slot,
        type_mask,
        partner_mask

),

typings as (

    select
        slot1_types.rel_id,
        slot1_types.type_name as type_a,
        slot2_types.type_name as type_b,
        slot1_types.type_rank as type_rank_a,
        slot2_types.type_rank as type_rank_b

    from slot1_types
    inner join slot2_types
        on slot1_types.rel_id = slot2_types.rel_id

),

sized as (

    select
        typings.rel_id,
        typings.type_a,
        typings.type_b,
        typings.type_rank_a,
        typings.type_rank_b,
        sum(count_classes.n_pairs) as n_entity_pairs,
        sum(count_classes.n_instances) as n_instances,
        sum(count_classes.n_arg1_entities) as n_arg1_entities,
        sum(count_classes.n_arg2_entities) as n_arg2_entities

    from typings
    inner join count_classes
        on typings.rel_id = count_classes.rel_id
    where {{ bit_is_set('count_classes.arg1_mask', 'typings.type_rank_a - 1') }}
        and {{ bit_is_set('count_classes.arg2_mask', 'typings.type_rank_b - 1') }}
    group by
        typings.rel_id,
        typings.type_a,
        typings.type_b,
        typings.type_rank_a,
        typings.type_rank_b
    having sum(count_classes.n_pairs) >= {{ var('r_min') }}

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
            order by type_rank_a, type_rank_b
        ) - 1 as integer) as tsg_index,
        cast(n_entity_pairs as bigint) as n_entity_pairs,
        cast(n_instances as bigint) as n_instances,
        cast(n_arg1_entities as bigint) as n_arg1_entities,
        cast(n_arg2_entities as bigint) as n_arg2_entities

    from sized

)

select * from keyed
