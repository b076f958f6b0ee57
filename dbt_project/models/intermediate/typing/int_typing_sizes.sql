{{ config(
    materialized=incremental_materialization(),
    unique_key=['rel_id', 'type_rank_a', 'type_rank_b'],
    reset_relations_on=['rel_id'],
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
-- depends_on: {{ ref('int_retyped_relations') }}
-- Paper §2.2: |R_{s,u}|, its instances, |π1(R_{s,u})| and |π2(R_{s,u})| for every typing (s, u) of the
-- ranked slot types (⊤ matches everything) that holds at least one pair, kept or not: int_typed_relations
-- keeps those with |R_{s,u}| ≥ r_min. Summed over count classes (macro typing_count_classes), not over
-- (pair, typing) rows.
-- Incremental: recomputed for the relations typed from scratch (int_retyped_relations); elsewhere the
-- masks do not change, so the count classes of the changed pairs and slot entities are added to the
-- previous sizes and those of their previous versions taken away (a slot entity whose partners' mask
-- grew moves from its previous class to its new one).
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

    {{ recomputed_relation_rows(ref('int_relation_pair_typings')) }}

),

slot_entity_classes as (

    {{ recomputed_relation_rows(ref('int_slot_entity_classes')) }}

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

{% if is_incremental() %}
-- the other relations' changed pairs and slot entities, and their previous versions
changed_pairs as (

    select * from {{ changed_rows(ref('int_relation_pair_typings')) }}
    where not {{ is_retyped_relation('rel_id') }}

),

replaced_pairs as (

    select previous_pairs.*
    from {{ previous_build(ref('int_relation_pair_typings')) }} as previous_pairs
    inner join changed_pairs
        on previous_pairs.rel_id = changed_pairs.rel_id
        and previous_pairs.arg1_entity_id = changed_pairs.arg1_entity_id
        and previous_pairs.arg2_entity_id = changed_pairs.arg2_entity_id

),

changed_slot_entities as (

    select * from {{ changed_rows(ref('int_slot_entity_classes')) }}
    where not {{ is_retyped_relation('rel_id') }}

),

replaced_slot_entities as (

    select previous_slot_entities.*
    from {{ previous_build(ref('int_slot_entity_classes')) }} as previous_slot_entities
    inner join changed_slot_entities
        on previous_slot_entities.rel_id = changed_slot_entities.rel_id
        and previous_slot_entities.slot = changed_slot_entities.slot
        and previous_slot_entities.entity_id = changed_slot_entities.entity_id

),

added_classes as (

    {{ typing_count_classes('changed_pairs', 'changed_slot_entities') }}

),

removed_classes as (

    {{ typing_count_classes('replaced_pairs', 'replaced_slot_entities') }}

),

class_changes as (

    select * from added_classes

    union all

    select
        rel_id,
        arg1_mask,
        arg2_mask,
        -n_pairs as n_pairs,
        -n_instances as n_instances,
        -n_arg1_entities as n_arg1_entities,
        -n_arg2_entities as n_arg2_entities

    from removed_classes

),

changed_typings as (

    select typings.*
    from typings
    where typings.rel_id in (select class_changes.rel_id from class_changes)

),

size_changes as (

    {{ typing_class_sums('changed_typings', 'class_changes') }}

),

previous_sizes as (

    select * from {{ previous_build(this) }}

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
