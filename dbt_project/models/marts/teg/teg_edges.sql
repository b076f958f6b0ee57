{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Members of the typed relations: the pairs whose type masks admit the typing. The typings are matched
-- once per distinct (relation, arg1 mask, arg2 mask), then every pair picks up its typings by an
-- equi-join on that class (no bit test per pair and typing).
with

class_pairs as (

    select * from {{ ref('int_relation_pair_typings') }}

),

pair_masks as (

    select * from {{ ref('int_relation_pair_typings') }}

),

typings as (

    select * from {{ ref('int_typed_relations') }}

),

typed_relations as (

    select * from {{ ref('typed_relations') }}

),

-- one import CTE per use (Postgres materialises a CTE that is read twice)
arg1_keys as (

    select * from {{ ref('int_entity_keys') }}

),

arg2_keys as (

    select * from {{ ref('int_entity_keys') }}

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
        typings.typed_rel_id

    from mask_classes
    inner join typings
        on mask_classes.rel_id = typings.rel_id
    where {{ bit_is_set('mask_classes.arg1_mask', 'typings.type_rank_a - 1') }}
        and {{ bit_is_set('mask_classes.arg2_mask', 'typings.type_rank_b - 1') }}

),

final as (

    select
        class_typings.typed_rel_id,
        pair_masks.rel_id,
        pair_masks.arg1_entity_id,
        pair_masks.arg2_entity_id,
        cast(pair_masks.n_instances as bigint) as n_instances,
        {{ surrogate_key([
            'typed_relations.typed_relation_key',
            'arg1_keys.source_entity_id',
            'arg2_keys.source_entity_id',
        ]) }} as edge_key

    from pair_masks
    inner join class_typings
        on pair_masks.rel_id = class_typings.rel_id
        and pair_masks.arg1_mask = class_typings.arg1_mask
        and pair_masks.arg2_mask = class_typings.arg2_mask
    inner join typed_relations
        on class_typings.typed_rel_id = typed_relations.typed_rel_id
    inner join arg1_keys
        on pair_masks.arg1_entity_id = arg1_keys.entity_id
    inner join arg2_keys
        on pair_masks.arg2_entity_id = arg2_keys.entity_id

)

select * from final
