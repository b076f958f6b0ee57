{{ config(
    materialized=incremental_materialization(),
    unique_key=['relation_pair_id', 'arg1_entity_id', 'arg2_entity_id'],
    reset_relations_on=['premise_rel_id', 'hypothesis_rel_id'],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- depends_on: {{ ref('int_retyped_relations') }}
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
--      different relations (covers straight and crossed) - most pairs occur in one relation only
--      (int_shared_entity_pairs, which runs beside the slot typing models).
--   2. relation_overlaps: overlaps on UNTYPED relations first (one row per shared pair and relation
--      pair instead of one per typing pair, up to (k+1)² times fewer), pruned by the r_min bounds;
--      every typed overlap is a subset of its untyped one, so nothing valid is lost.
--   3. only the A∩B pairs of surviving relation pairs go on to be expanded to typings.
-- A separate table (not a CTE) so the planner has statistics for the typed stage.
--
-- Incremental: the pairs new to the graph and every pair of a relation typed from scratch (the driving
-- pairs) are matched with every shared pair of the graph. A relation pair that had survived the bounds
-- gets its new members added, one with a relation typed from scratch gets all of them again (they are
-- all among the matches), and one that had not survived is counted from scratch from its two
-- relations' pairs.
with

relation_pairs as (

    select * from {{ ref('int_relation_pair_typings') }}

),

shared_keys as (

    select * from {{ ref('int_shared_entity_pairs') }}

),

-- the pairs of the graph that another relation has too (in either orientation): the only ones in any
-- overlap, about a sixth of the pairs (read several times, so Postgres materialises it)
shared_pairs as (

    select
        relation_pairs.rel_id,
        relation_pairs.arg1_entity_id,
        relation_pairs.arg2_entity_id,
        relation_pairs.arg1_mask,
        relation_pairs.arg2_mask,
        relation_pairs.first_batch_id

    from relation_pairs
    inner join shared_keys
        on least(relation_pairs.arg1_entity_id, relation_pairs.arg2_entity_id) = shared_keys.low_entity_id
        and greatest(relation_pairs.arg1_entity_id, relation_pairs.arg2_entity_id) = shared_keys.high_entity_id

),

{% if is_incremental() %}
driving_pairs as (

    select * from shared_pairs
    where first_batch_id > {{ previous_max_batch_id() }}
        or {{ is_retyped_relation('rel_id') }}

),

settled_pairs as (

    select * from shared_pairs
    where first_batch_id <= {{ previous_max_batch_id() }}
        and not {{ is_retyped_relation('rel_id') }}

),

-- the members with a driving pair on either side, each once
new_members as (

    {{ relation_overlap_members('driving_pairs', 'shared_pairs') }}

    union all

    {{ relation_overlap_members('settled_pairs', 'driving_pairs') }}

),

candidate_members as (

    select
        {{ relation_pair_id('premise_rel_id', 'hypothesis_rel_id', 'alignment') }} as relation_pair_id,
        new_members.*

    from new_members

),

previous_members as (

    select * from {{ previous_build(this) }}

),

candidate_relation_pairs as (

    select distinct
        candidate_members.relation_pair_id,
        candidate_members.premise_rel_id,
        candidate_members.hypothesis_rel_id,
        candidate_members.alignment,
        {{ is_retyped_relation('candidate_members.premise_rel_id') }}
        or {{ is_retyped_relation('candidate_members.hypothesis_rel_id') }}
            as is_retyped

    from candidate_members

),

classified_relation_pairs as (

    select
        candidate_relation_pairs.*,
        candidate_relation_pairs.relation_pair_id in (select previous_members.relation_pair_id from previous_members)
            as had_survived

    from candidate_relation_pairs

),

-- relation pairs counted from scratch: new candidates of two relations whose slot types did not change
scratch_relation_pairs as (

    select * from classified_relation_pairs
    where not is_retyped
        and not had_survived

),

-- a scratch relation pair is counted by probing the larger relation with the shared pairs of the smaller
-- one (a hub relation is a scratch relation of many pairs; joining the scratch relations' pairs with each
-- other would join the hubs' pairs with every relation's); the sizes only choose the side
relation_sizes as (

    select
        rel_id,
        count(*) as n_entity_pairs

    from shared_pairs
    group by rel_id

),

scratch_sizes as (

    select
        scratch_relation_pairs.relation_pair_id,
        scratch_relation_pairs.premise_rel_id,
        scratch_relation_pairs.hypothesis_rel_id,
        scratch_relation_pairs.alignment,
        coalesce(premise_size.n_entity_pairs, 0) <= coalesce(hypothesis_size.n_entity_pairs, 0)
            as premise_is_smaller

    from scratch_relation_pairs
    left join relation_sizes as premise_size
        on scratch_relation_pairs.premise_rel_id = premise_size.rel_id
    left join relation_sizes as hypothesis_size
        on scratch_relation_pairs.hypothesis_rel_id = hypothesis_size.rel_id

),

scratch_sides as (

    select
        *,
        case when premise_is_smaller then premise_rel_id else hypothesis_rel_id end as smaller_rel_id,
        case when premise_is_smaller then hypothesis_rel_id else premise_rel_id end as larger_rel_id

    from scratch_sizes

),

-- a pair of the overlap of two different relations is a shared pair of both
smaller_side_pairs as (

    select * from shared_pairs

),

larger_side_pairs as (

    select * from shared_pairs

),

-- each scratch relation pair with the pairs of its smaller relation, in that relation's orientation
scratch_probes as (

    select
        scratch_sides.*,
        smaller_side_pairs.arg1_entity_id,
        smaller_side_pairs.arg2_entity_id,
        smaller_side_pairs.arg1_mask,
        smaller_side_pairs.arg2_mask

    from scratch_sides
    inner join smaller_side_pairs
        on scratch_sides.smaller_rel_id = smaller_side_pairs.rel_id

),

-- the probes the larger relation also has (reversed when crossed); one join per alignment keeps the join
-- keys plain columns, which the planner estimates and hashes well
scratch_found as (

    select
        scratch_probes.*,
        larger_side_pairs.arg1_mask as larger_arg1_mask,
        larger_side_pairs.arg2_mask as larger_arg2_mask

    from scratch_probes
    inner join larger_side_pairs
        on scratch_probes.larger_rel_id = larger_side_pairs.rel_id
        and scratch_probes.arg1_entity_id = larger_side_pairs.arg1_entity_id
        and scratch_probes.arg2_entity_id = larger_side_pairs.arg2_entity_id
    where scratch_probes.alignment = 'straight'

    union all

    select
        scratch_probes.*,
        larger_side_pairs.arg1_mask as larger_arg1_mask,
        larger_side_pairs.arg2_mask as larger_arg2_mask

    from scratch_probes
    inner join larger_side_pairs
        on scratch_probes.larger_rel_id = larger_side_pairs.rel_id
        and scratch_probes.arg1_entity_id = larger_side_pairs.arg2_entity_id
        and scratch_probes.arg2_entity_id = larger_side_pairs.arg1_entity_id
    where scratch_probes.alignment = 'crossed'

),

-- as members in the premise's orientation: the premise's row is the probe when the premise is the
-- smaller relation, else the larger relation's
scratch_members as (

    select
        relation_pair_id,
        premise_rel_id,
        hypothesis_rel_id,
        alignment,
        -- the premise's pair: the probe, or the larger relation's pair (the probe reversed when crossed)
        case when premise_is_smaller or alignment = 'straight' then arg1_entity_id else arg2_entity_id end
            as arg1_entity_id,
        case when premise_is_smaller or alignment = 'straight' then arg2_entity_id else arg1_entity_id end
            as arg2_entity_id,
        case when premise_is_smaller then arg1_mask else larger_arg1_mask end as arg1_premise_mask,
        case when premise_is_smaller then arg2_mask else larger_arg2_mask end as arg2_premise_mask,
        -- the hypothesis' masks of the slots x and y fill there (2 and 1 when crossed)
        case
            when not premise_is_smaller then case when alignment = 'straight' then arg1_mask else arg2_mask end
            when alignment = 'straight' then larger_arg1_mask
            else larger_arg2_mask
        end as arg1_hypothesis_mask,
        case
            when not premise_is_smaller then case when alignment = 'straight' then arg2_mask else arg1_mask end
            when alignment = 'straight' then larger_arg2_mask
            else larger_arg1_mask
        end as arg2_hypothesis_mask

    from scratch_found

),

-- complete member lists of the relation pairs that must pass the bounds again
recounted_members as (

    select candidate_members.*
    from candidate_members
    inner join classified_relation_pairs
        on candidate_members.relation_pair_id = classified_relation_pairs.relation_pair_id
    where classified_relation_pairs.is_retyped

    union all

    select * from scratch_members

),

recounted_survivors as (

    select relation_pair_id
    from recounted_members
    group by relation_pair_id
    having count(*) >= {{ var('r_min') }}
        and count(distinct arg1_entity_id) >= {{ var('r_min') }}
        and count(distinct arg2_entity_id) >= {{ var('r_min') }}

),

final as (

    select candidate_members.*
    from candidate_members
    inner join classified_relation_pairs
        on candidate_members.relation_pair_id = classified_relation_pairs.relation_pair_id
    where classified_relation_pairs.had_survived
        and not classified_relation_pairs.is_retyped

    union all

    select recounted_members.*
    from recounted_members
    inner join recounted_survivors
        on recounted_members.relation_pair_id = recounted_survivors.relation_pair_id

)
{% else %}
relation_joined as (

    {{ relation_overlap_members('shared_pairs', 'shared_pairs') }}

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
final as (

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
{% endif %}

select * from final
