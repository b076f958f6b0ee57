{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'type_rank_a', 'type_rank_b'],
    reset_relations_on=['rel_id'],
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
{%- set plan = build_plan() %}
-- depends_on: {{ ref('int_build_plan') }}
-- depends_on: {{ ref('int_retyped_relations') }}
-- Paper §2.2: |R_{s,u}|, its instances, |π1(R_{s,u})| and |π2(R_{s,u})| for every typing (s, u) of the
-- ranked slot types (⊤ matches everything) that holds at least one pair, kept or not: int_typed_relations
-- keeps those with |R_{s,u}| ≥ r_min. Summed over count classes (macro typing_count_classes), not over
-- (pair, typing) rows.
-- Incremental: recomputed for the relations whose slot types changed; elsewhere the masks do not
-- change, so the classes of the new or changed pairs and slot entities add to the previous sizes (a
-- slot entity whose partners' mask grew moves from its previous class to its new one).
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
slot1_types as (

    select * from {{ ref('int_slot_types_ranked') }}
    where slot = 1

),

slot2_types as (

    select * from {{ ref('int_slot_types_ranked') }}
    where slot = 2

),

pair_typings as (

    {{ recomputed_relation_rows(ref('int_relation_pair_typings'), plan) }}

),

slot_entity_classes as (

    {{ recomputed_relation_rows(ref('int_slot_entity_classes'), plan) }}

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

count_classes as (

    {{ typing_count_classes('pair_typings', 'slot_entity_classes') }}

),

sized as (

    {{ typing_class_sums('typings', 'count_classes') }}

),

{% if plan.incremental %}
changed_pairs as (

    select * from {{ delta_relation(ref('int_relation_pair_typings')) }}
    where {{ is_not_retyped_relation('rel_id') }}

),

previous_pairs as (

    select * from {{ previous_table('int_relation_pair_typings') }}

),

changed_slot_entities as (

    select * from {{ delta_relation(ref('int_slot_entity_classes')) }}
    where {{ is_not_retyped_relation('rel_id') }}

),

previous_slot_entities as (

    select * from {{ previous_table('int_slot_entity_classes') }}

),

-- what the changed rows add to each class: a new pair, more instances; a slot entity leaves its
-- previous class and joins its new one
class_changes as (

    select
        changed_pairs.rel_id,
        changed_pairs.arg1_mask,
        changed_pairs.arg2_mask,
        case when previous_pairs.rel_id is null then 1 else 0 end as n_pairs,
        changed_pairs.n_instances - coalesce(previous_pairs.n_instances, 0) as n_instances,
        0 as n_arg1_entities,
        0 as n_arg2_entities

    from changed_pairs
    left join previous_pairs
        on changed_pairs.rel_id = previous_pairs.rel_id
        and changed_pairs.arg1_entity_id = previous_pairs.arg1_entity_id
        and changed_pairs.arg2_entity_id = previous_pairs.arg2_entity_id

    union all

    select
        changed_slot_entities.rel_id,
        case when changed_slot_entities.slot = 1 then changed_slot_entities.type_mask
            else changed_slot_entities.partner_mask
        end as arg1_mask,
        case when changed_slot_entities.slot = 1 then changed_slot_entities.partner_mask
            else changed_slot_entities.type_mask
        end as arg2_mask,
        0 as n_pairs,
        0 as n_instances,
        case when changed_slot_entities.slot = 1 then 1 else 0 end as n_arg1_entities,
        case when changed_slot_entities.slot = 2 then 1 else 0 end as n_arg2_entities

    from changed_slot_entities

    union all

    select
        previous_slot_entities.rel_id,
        case when previous_slot_entities.slot = 1 then previous_slot_entities.type_mask
            else previous_slot_entities.partner_mask
        end as arg1_mask,
        case when previous_slot_entities.slot = 1 then previous_slot_entities.partner_mask
            else previous_slot_entities.type_mask
        end as arg2_mask,
        0 as n_pairs,
        0 as n_instances,
        case when previous_slot_entities.slot = 1 then -1 else 0 end as n_arg1_entities,
        case when previous_slot_entities.slot = 2 then -1 else 0 end as n_arg2_entities

    from previous_slot_entities
    inner join changed_slot_entities
        on previous_slot_entities.rel_id = changed_slot_entities.rel_id
        and previous_slot_entities.slot = changed_slot_entities.slot
        and previous_slot_entities.entity_id = changed_slot_entities.entity_id

),

changed_typings as (

    select typings.*
    from typings
    where typings.rel_id in (select rel_id from class_changes)

),

size_changes as (

    {{ typing_class_sums('changed_typings', 'class_changes') }}

),

previous_sizes as (

    select * from {{ previous_relation(this) }}

),

updated as (

    select
        size_changes.rel_id,
        size_changes.type_a,
        size_changes.type_b,
        size_changes.type_rank_a,
        size_changes.type_rank_b,
        coalesce(previous_sizes.n_entity_pairs, 0) + size_changes.n_entity_pairs as n_entity_pairs,
        coalesce(previous_sizes.n_instances, 0) + size_changes.n_instances as n_instances,
        coalesce(previous_sizes.n_arg1_entities, 0) + size_changes.n_arg1_entities as n_arg1_entities,
        coalesce(previous_sizes.n_arg2_entities, 0) + size_changes.n_arg2_entities as n_arg2_entities

    from size_changes
    left join previous_sizes
        on size_changes.rel_id = previous_sizes.rel_id
        and size_changes.type_rank_a = previous_sizes.type_rank_a
        and size_changes.type_rank_b = previous_sizes.type_rank_b

),

all_sizes as (

    select * from sized
    union all
    select * from updated

),
{% else %}
all_sizes as (

    select * from sized

),
{% endif %}

final as (

    select
        rel_id,
        type_a,
        type_b,
        cast(type_rank_a as integer) as type_rank_a,
        cast(type_rank_b as integer) as type_rank_b,
        cast(n_entity_pairs as bigint) as n_entity_pairs,
        cast(n_instances as bigint) as n_instances,
        cast(n_arg1_entities as bigint) as n_arg1_entities,
        cast(n_arg2_entities as bigint) as n_arg2_entities

    from all_sizes
    -- a typing whose class changes cancel out and that held no pair before holds none now
    where n_entity_pairs > 0

)

select * from final
