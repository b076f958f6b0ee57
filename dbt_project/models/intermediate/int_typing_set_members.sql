{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- The typed relations of each typing set of int_pair_typing_sets (one row per set and member): the
-- join that expands aggregated (set, set) overlap rows to typing pairs in int_pair_overlaps.
with

pair_typing_sets as (

    select * from {{ ref('int_pair_typing_sets') }}

),

typing_sets as (

    select distinct
        typing_set_id,
        typed_rel_ids

    from pair_typing_sets

),

members as (

    select
        typing_set_id,
        {{ explode_array('typed_rel_ids') }} as typed_rel_id

    from typing_sets

)

select * from members
