{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Scale: for each entity pair of a relation, the SET of its typed relations (typings) that can still
-- pass criterion 3, as one integer typing_set_id. int_pair_overlaps aggregates the untyped overlap
-- per (typing set of A, typing set of B, entity) BEFORE expanding to typing pairs, so the ~(k+1)²-fold
-- expansion runs once per distinct (set, set, entity) instead of once per overlap pair and entity.
-- Only typings with |π1(T)|, |π2(T)| ≥ r_min are members: |πi(A∩B)| ≤ |πi(A)|, so the others can
-- never reach criterion 3 (fewer rows to expand; int_pair_overlaps' output is unchanged).
-- A typed relation belongs to one relation, so a typing set identifies its relation too.
with

typed_pairs as (

    select * from {{ ref('int_typed_relation_pairs') }}

),

typed_relations as (

    select * from {{ ref('int_typed_subrelations') }}

),

eligible_typed_pairs as (

    {{ eligible_typed_pairs('typed_pairs', 'typed_relations') }}

),

pair_sets as (

    select
        rel_id,
        arg1_entity_id,
        arg2_entity_id,
        {{ sorted_set_agg('typed_rel_id') }} as typed_rel_ids

    from eligible_typed_pairs
    group by
        rel_id,
        arg1_entity_id,
        arg2_entity_id

),

keyed as (

    select
        rel_id,
        arg1_entity_id,
        arg2_entity_id,
        cast(dense_rank() over (order by typed_rel_ids) as integer) as typing_set_id,
        typed_rel_ids

    from pair_sets

)

select * from keyed
