{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Untyped stage of A∩B (paper §2.3): the entity pairs shared by two relations of DIFFERENT paths, for
-- relation pairs whose untyped overlap can still pass criteria 2-3 (every typed overlap is a subset of
-- its untyped one), with the type masks the typed stage counts from.
-- Both alignments: straight A(x,y) ⇒ B(x,y): A∩B = A ∩ B; crossed A(x,y) ⇒ B(y,x):
-- A∩B = {(x,y) ∈ A : (y,x) ∈ B}; (arg1, arg2) is in the premise's orientation. Same-path pairs are
-- skipped: the paper drops premises with the hypothesis' path before the top-N cut, so they can never
-- be InfCands. Each unordered relation pair appears once, with premise_rel_id < hypothesis_rel_id: the
-- rule in the other direction has the same overlap (reversed when crossed), so int_typed_overlaps
-- counts it once and adds the mirrored rule (half the work of this and the typed stage).
--
-- Masks (int_relation_pair_typings): arg1_premise_mask / arg2_premise_mask are the premise's masks of
-- x and y; arg1_hypothesis_mask / arg2_hypothesis_mask the hypothesis' masks of the slots x and y fill
-- there (slots 1 and 2 straight, 2 and 1 crossed). Pairs of relations below r_min and pairs in no
-- typing are not in int_relation_pair_typings, so they are in no overlap here either.
--
-- Why the steps (a naive typed self-join on the pair explodes on hub pairs and spills):
--   1. shared_keys: only unordered pairs {x,y} seen in ≥ 2 relations can be in any overlap of two
--      different relations (covers straight and crossed) - most pairs occur in one relation only.
--   2. relation_overlaps: overlaps on UNTYPED relations first (one row per shared pair and relation
--      pair instead of one per typing pair, up to (k+1)² times fewer), pruned by the r_min bounds;
--      every typed overlap is a subset of its untyped one, so nothing valid is lost.
--   3. only the A∩B pairs of surviving relation pairs go on to be expanded to typings.
-- A separate table (not a CTE) so the planner has statistics for the typed stage.
with

-- one import CTE per use (Postgres materialises a CTE that is read twice)
key_pairs as (

    select * from {{ ref('int_relation_pair_typings') }}

),

relation_pairs as (

    select * from {{ ref('int_relation_pair_typings') }}

),

shared_keys as (

    select
        least(arg1_entity_id, arg2_entity_id) as low_entity_id,
        greatest(arg1_entity_id, arg2_entity_id) as high_entity_id

    from key_pairs
    group by
        least(arg1_entity_id, arg2_entity_id),
        greatest(arg1_entity_id, arg2_entity_id)
    having count(distinct rel_id) >= 2

),

shared_pairs as (

    select
        relation_pairs.rel_id,
        relation_pairs.arg1_entity_id,
        relation_pairs.arg2_entity_id,
        relation_pairs.arg1_mask,
        relation_pairs.arg2_mask

    from relation_pairs
    inner join shared_keys
        on least(relation_pairs.arg1_entity_id, relation_pairs.arg2_entity_id) = shared_keys.low_entity_id
        and greatest(relation_pairs.arg1_entity_id, relation_pairs.arg2_entity_id) = shared_keys.high_entity_id

),

relation_joined as (

    select
        premise.rel_id as premise_rel_id,
        hypothesis.rel_id as hypothesis_rel_id,
        'straight' as alignment,
        premise.arg1_entity_id,
        premise.arg2_entity_id,
        premise.arg1_mask as arg1_premise_mask,
        premise.arg2_mask as arg2_premise_mask,
        hypothesis.arg1_mask as arg1_hypothesis_mask,
        hypothesis.arg2_mask as arg2_hypothesis_mask

    from shared_pairs as premise
    inner join shared_pairs as hypothesis
        on premise.arg1_entity_id = hypothesis.arg1_entity_id
        and premise.arg2_entity_id = hypothesis.arg2_entity_id
        and premise.rel_id < hypothesis.rel_id

    union all

    -- x fills the hypothesis' second slot and y its first
    select
        premise.rel_id as premise_rel_id,
        hypothesis.rel_id as hypothesis_rel_id,
        'crossed' as alignment,
        premise.arg1_entity_id,
        premise.arg2_entity_id,
        premise.arg1_mask as arg1_premise_mask,
        premise.arg2_mask as arg2_premise_mask,
        hypothesis.arg2_mask as arg1_hypothesis_mask,
        hypothesis.arg1_mask as arg2_hypothesis_mask

    from shared_pairs as premise
    inner join shared_pairs as hypothesis
        on premise.arg1_entity_id = hypothesis.arg2_entity_id
        and premise.arg2_entity_id = hypothesis.arg1_entity_id
        and premise.rel_id < hypothesis.rel_id

),

relation_overlaps as (

    select
        premise_rel_id,
        hypothesis_rel_id,
        alignment

    from relation_joined
    group by
        premise_rel_id,
        hypothesis_rel_id,
        alignment
    having count(*) >= {{ var('r_min') }}
        and count(distinct arg1_entity_id) >= {{ var('r_min') }}
        and count(distinct arg2_entity_id) >= {{ var('r_min') }}

),

-- the untyped A∩B pairs of the surviving relation pairs: only these can be in a typed overlap
relation_overlap_pairs as (

    select
        {{ relation_pair_id('relation_joined.premise_rel_id', 'relation_joined.hypothesis_rel_id', 'relation_joined.alignment') }}
            as relation_pair_id,
        relation_joined.*

    from relation_joined
    inner join relation_overlaps
        on relation_joined.premise_rel_id = relation_overlaps.premise_rel_id
        and relation_joined.hypothesis_rel_id = relation_overlaps.hypothesis_rel_id
        and relation_joined.alignment = relation_overlaps.alignment

)

select * from relation_overlap_pairs
