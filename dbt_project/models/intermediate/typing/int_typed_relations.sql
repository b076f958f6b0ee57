{{ config(
    materialized=incremental_materialization(),
    unique_key='rel_id',
    reset_relations_on=['rel_id'],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
{%- set plan = build_plan() %}
-- depends_on: {{ ref('int_build_plan') }}
-- depends_on: {{ ref('int_retyped_relations') }}
-- Paper §2.2: typed relations R_{s,u} for s, u among the ranked slot types (⊤ matches everything),
-- kept when |R_{s,u}| ≥ r_min (sizes from int_typing_sizes). typed_rel_id is global, a function of
-- (rel_id, rank of s, rank of u) (macro typed_relation_id); tsg_index is SherLIiC's per-relation type
-- id (0-based, by slot-1 rank then slot-2 rank).
-- Incremental: the relations whose typing sizes changed (all their rows are replaced).
with

typing_sizes as (

    select * from {{ ref('int_typing_sizes') }}
    {%- if plan.incremental %}
    where rel_id in (
            select changed_sizes.rel_id from {{ delta_relation(ref('int_typing_sizes')) }} as changed_sizes
        )
    {%- endif %}

),

kept as (

    select * from typing_sizes
    where n_entity_pairs >= {{ var('r_min') }}

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
        n_entity_pairs,
        n_instances,
        n_arg1_entities,
        n_arg2_entities

    from kept

)

select * from keyed
