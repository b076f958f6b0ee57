{{ config(post_hook="{{ analyze_table() }}") }}
-- The relations this build types from scratch: in a full build every ranked relation; in an incremental
-- build those whose kept slot types (int_slot_types_ranked: type, its place by name, ⊤ padding) changed
-- or are new. Their type masks, typings and overlaps are recomputed, while every other relation's are
-- updated from its new pairs (macros/incremental.sql); a change of count order alone (count_rank)
-- changes no mask.
with

ranked as (

    select * from {{ ref('int_slot_types_ranked') }}

),

{% if build_plan().incremental %}
previous_ranked as (

    select * from {{ previous_build(ref('int_slot_types_ranked')) }}

),

-- kept types present in one ranking but not (with the same place) in the other
differences as (

    select coalesce(ranked.rel_id, previous_ranked.rel_id) as rel_id

    from ranked
    full outer join previous_ranked
        on ranked.rel_id = previous_ranked.rel_id
        and ranked.slot = previous_ranked.slot
        and ranked.type_rank = previous_ranked.type_rank
        and ranked.type_name = previous_ranked.type_name
        and ranked.is_top_type = previous_ranked.is_top_type
    where ranked.rel_id is null
        or previous_ranked.rel_id is null

),

final as (

    select distinct rel_id
    from differences

)
{% else %}
final as (

    select distinct rel_id
    from ranked

)
{% endif %}

select * from final
