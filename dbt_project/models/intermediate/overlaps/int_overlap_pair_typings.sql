{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- The typings each untyped overlap pair (int_relation_overlaps) can belong to: the type masks of the
-- pair in the premise and in the hypothesis (int_relation_pair_typings). int_overlap_typing_sizes
-- and int_typed_overlaps count typed overlaps from these four small integers instead of joining
-- typed relation members. All four are in the premise's orientation: x = arg1 of the premise, y =
-- arg2; the hypothesis' masks are those of the slots x and y fill there (slots 1 and 2 straight,
-- 2 and 1 crossed).
with

relation_overlaps as (

    select * from {{ ref('int_relation_overlaps') }}

),

-- one import CTE per use (Postgres materialises a CTE that is read twice)
premise_masks as (

    select * from {{ ref('int_relation_pair_typings') }}

),

hypothesis_masks as (

    select * from {{ ref('int_relation_pair_typings') }}

),

final as (

    select
        relation_overlaps.relation_pair_id,
        relation_overlaps.premise_rel_id,
        relation_overlaps.hypothesis_rel_id,
        relation_overlaps.alignment,
        relation_overlaps.arg1_entity_id,
        relation_overlaps.arg2_entity_id,
        premise_masks.arg1_mask as arg1_premise_mask,
        premise_masks.arg2_mask as arg2_premise_mask,
        case when relation_overlaps.alignment = 'straight' then hypothesis_masks.arg1_mask
            else hypothesis_masks.arg2_mask
        end as arg1_hypothesis_mask,
        case when relation_overlaps.alignment = 'straight' then hypothesis_masks.arg2_mask
            else hypothesis_masks.arg1_mask
        end as arg2_hypothesis_mask

    from relation_overlaps
    inner join premise_masks
        on relation_overlaps.premise_rel_id = premise_masks.rel_id
        and relation_overlaps.arg1_entity_id = premise_masks.arg1_entity_id
        and relation_overlaps.arg2_entity_id = premise_masks.arg2_entity_id
    inner join hypothesis_masks
        on relation_overlaps.hypothesis_rel_id = hypothesis_masks.rel_id
        and relation_overlaps.hypothesis_arg1_entity_id = hypothesis_masks.arg1_entity_id
        and relation_overlaps.hypothesis_arg2_entity_id = hypothesis_masks.arg2_entity_id

)

select * from final
