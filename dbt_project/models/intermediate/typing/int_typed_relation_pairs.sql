{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Members of the kept typed relations (the TEG's edges): the pairs whose type masks admit the typing.
-- The typings are matched once per distinct (relation, arg1 mask, arg2 mask), then every pair picks
-- up its typings by an equi-join on that class (no bit test per pair and typing).
with

class_pairs as (

    select * from {{ ref('int_relation_pair_typings') }}

),

pair_masks as (

    select * from {{ ref('int_relation_pair_typings') }}

),

typed_relations as (

    select * from {{ ref('int_typed_relations') }}

),

mask_classes as (

    select distinct
        rel_id,
        arg1_mask,
        arg2_mask

    from class_pairs

),

class_typings as (

    select
        mask_classes.rel_id,
        mask_classes.arg1_mask,
        mask_classes.arg2_mask,
        typed_relations.typed_rel_id

    from mask_classes
    inner join typed_relations
        on mask_classes.rel_id = typed_relations.rel_id
    where {{ bit_is_set('mask_classes.arg1_mask', 'typed_relations.type_rank_a - 1') }}
        and {{ bit_is_set('mask_classes.arg2_mask', 'typed_relations.type_rank_b - 1') }}

),

members as (

    select
        class_typings.typed_rel_id,
        pair_masks.rel_id,
        pair_masks.arg1_entity_id,
        pair_masks.arg2_entity_id,
        pair_masks.n_instances

    from pair_masks
    inner join class_typings
        on pair_masks.rel_id = class_typings.rel_id
        and pair_masks.arg1_mask = class_typings.arg1_mask
        and pair_masks.arg2_mask = class_typings.arg2_mask

)

select * from members
