{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Paper §2.2: per relation R and slot i, rank types t by |{p ∈ R : t ∈ τ(π_i(p))}| (ties by type name),
-- keep the top k (var top_k_types); when fewer than k types occur, add the top type ⊤
-- (var top_type, default 'thing') after them, counted with all |R| pairs.
-- Relations with |R| < r_min are dropped here: none of their typed relations R_{s,u} ⊆ R can reach r_min.
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
first_slot_entities as (

    select * from {{ ref('int_slot_entities') }}
    where slot = 1

),

slot_entities as (

    select * from {{ ref('int_slot_entities') }}

),

entity_types as (

    select * from {{ ref('int_entity_types') }}

),

-- |R| = the pairs of R, each of which has one first argument
relation_sizes as (

    select
        rel_id,
        sum(n_pairs) as n_entity_pairs

    from first_slot_entities
    group by rel_id
    having sum(n_pairs) >= {{ var('r_min') }}

),

-- |{p ∈ R : t ∈ τ(π_i(p))}| = Σ over the entities e filling slot i with t ∈ τ(e) of e's pairs
type_counts as (

    select
        slot_entities.rel_id,
        slot_entities.slot,
        entity_types.type_name,
        sum(slot_entities.n_pairs) as n_entity_pairs

    from slot_entities
    inner join relation_sizes
        on slot_entities.rel_id = relation_sizes.rel_id
    inner join entity_types
        on slot_entities.entity_id = entity_types.entity_id
    group by
        slot_entities.rel_id,
        slot_entities.slot,
        entity_types.type_name

),

ranked as (

    select
        rel_id,
        slot,
        type_name,
        n_entity_pairs,
        row_number() over (
            partition by rel_id, slot
            order by n_entity_pairs desc, type_name asc
        ) as type_rank

    from type_counts

),

top_k as (

    select
        rel_id,
        slot,
        type_name,
        n_entity_pairs,
        type_rank,
        false as is_top_type

    from ranked
    where type_rank <= {{ var('top_k_types') }}

),

slots as (

    select
        rel_id,
        n_entity_pairs,
        1 as slot
    from relation_sizes
    union all
    select
        rel_id,
        n_entity_pairs,
        2 as slot
    from relation_sizes

),

kept_per_slot as (

    select
        rel_id,
        slot,
        count(*) as n_types

    from top_k
    group by
        rel_id,
        slot

),

top_type_padding as (

    select
        slots.rel_id,
        slots.slot,
        {{ top_type() }} as type_name,
        slots.n_entity_pairs,
        coalesce(kept_per_slot.n_types, 0) + 1 as type_rank,
        true as is_top_type

    from slots
    left join kept_per_slot
        on slots.rel_id = kept_per_slot.rel_id
        and slots.slot = kept_per_slot.slot
    where coalesce(kept_per_slot.n_types, 0) < {{ var('top_k_types') }}

),

final as (

    select * from top_k
    union all
    select * from top_type_padding

)

select
    rel_id,
    slot,
    type_name,
    cast(n_entity_pairs as bigint) as n_entity_pairs,
    cast(type_rank as integer) as type_rank,
    is_top_type

from final
