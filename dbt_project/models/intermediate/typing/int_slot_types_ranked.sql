{{ config(
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- Paper §2.2: per relation R and slot i, rank types t by |{p ∈ R : t ∈ τ(π_i(p))}| (ties by type name),
-- keep the top k (var top_k_types); when fewer than k types occur, add the top type ⊤
-- (var top_type, default 'thing') after them, counted with all |R| pairs.
-- Two orders of the kept types: count_rank, the paper's rank (it orders tsg_index), and type_rank, their
-- place by name with ⊤ last, which keys everything downstream (mask bits, typings, typed_rel_id). Keyed by
-- name, a relation whose kept types only change their count order keeps its masks and typed relations, so
-- an incremental build updates it from its new pairs instead of recomputing it (int_retyped_relations).
-- Relations with |R| < r_min are dropped here: none of their typed relations R_{s,u} ⊆ R can reach r_min.
-- Ranked in full in every build (an incremental path saved nothing measurable); int_retyped_relations
-- compares the ranking with the previous build's.
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
size_counts as (

    select * from {{ ref('int_slot_type_counts') }}
    where slot = 1
        and type_name = {{ top_type() }}

),

type_counts as (

    select * from {{ ref('int_slot_type_counts') }}
    where type_name <> {{ top_type() }}

),

-- |R| = the pairs of R (⊤ counts every pair)
relation_sizes as (

    select
        size_counts.rel_id,
        size_counts.n_entity_pairs

    from size_counts
    where size_counts.n_entity_pairs >= {{ var('r_min') }}

),

sized_type_counts as (

    select
        type_counts.rel_id,
        type_counts.slot,
        type_counts.type_name,
        type_counts.n_entity_pairs

    from type_counts
    inner join relation_sizes
        on type_counts.rel_id = relation_sizes.rel_id

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
        ) as count_rank

    from sized_type_counts

),

top_k as (

    select
        rel_id,
        slot,
        type_name,
        n_entity_pairs,
        count_rank,
        row_number() over (
            partition by rel_id, slot
            order by type_name asc
        ) as type_rank,
        false as is_top_type

    from ranked
    where count_rank <= {{ var('top_k_types') }}

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
        coalesce(kept_per_slot.n_types, 0) + 1 as count_rank,
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
    cast(count_rank as integer) as count_rank,
    cast(type_rank as integer) as type_rank,
    is_top_type

from final
