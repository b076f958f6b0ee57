{{ config(post_hook="{{ analyze_table() }}") }}
{%- set plan = build_plan() %}
-- depends_on: {{ ref('int_build_plan') }}
-- The relations whose kept slot types (int_slot_types_ranked: type, its place by name, ⊤ padding) this
-- build changed or introduced: their type masks, typings and overlaps are recomputed from scratch, while
-- every other relation's are updated from its new pairs (macros/incremental.sql); a change of count order
-- alone (count_rank) changes no mask. In a full build every ranked relation.
with

{% if plan.incremental %}
changed_ranked as (

    select * from {{ delta_relation(ref('int_slot_types_ranked')) }}

),

previous_ranked as (

    select * from {{ previous_table('int_slot_types_ranked') }}
    where rel_id in (select rel_id from changed_ranked)

),

-- ranks present in one ranking but not (with the same type) in the other
differences as (

    select coalesce(changed_ranked.rel_id, previous_ranked.rel_id) as rel_id

    from changed_ranked
    full outer join previous_ranked
        on changed_ranked.rel_id = previous_ranked.rel_id
        and changed_ranked.slot = previous_ranked.slot
        and changed_ranked.type_rank = previous_ranked.type_rank
        and changed_ranked.type_name = previous_ranked.type_name
        and changed_ranked.is_top_type = previous_ranked.is_top_type
    where changed_ranked.rel_id is null
        or previous_ranked.rel_id is null

),

final as (

    select distinct rel_id
    from differences

)
{% else %}
ranked as (

    select * from {{ ref('int_slot_types_ranked') }}

),

final as (

    select distinct rel_id
    from ranked

)
{% endif %}

select * from final
