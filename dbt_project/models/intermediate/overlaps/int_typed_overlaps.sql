{{ config(
    materialized=incremental_materialization(),
    unique_key='relation_pair_id',
    reset_relations_on=[relation_pair_premise('relation_pair_id'), relation_pair_hypothesis('relation_pair_id')],
    pre_hook=["{{ heavy_model_settings() }}", "{{ hash_aggregates_only() }}"],
    post_hook="{{ analyze_table() }}",
) }}
{%- set k = var('top_k_types') | int -%}
{%- set plan = build_plan() %}
-- depends_on: {{ ref('int_build_plan') }}
-- depends_on: {{ ref('int_retyped_relations') }}
-- Paper §2.3: A∩B for typed relations A (premise) and B (hypothesis) of different paths, both
-- alignments (see int_relation_overlaps), with |A∩B|, |π1(A∩B)|, |π2(A∩B)| and |π1 ∪ π2| (esr's
-- numerator), all in the premise's orientation. Only overlaps that can pass criteria 2-3 are kept;
-- the acceptance filter re-checks them.
--
-- Scale: nothing joins typed relation members. Everything is summed from the count classes of each
-- relation pair (int_overlap_classes: masks of x and y multiplied into (slot type of A, slot type of B)
-- combinations, class weights for |A∩B|, |π1|, |π2| and |π1 ∪ π2|):
--   1. side bounds: a typed overlap a∩b is a subset of O ∩ a (O = the untyped overlap), so the classes
--      projected on A's masks (first factors of the combinations) bound |a∩b| and its projections by
--      |O' ∩ a|, |π1(O' ∩ a)|, |π2(O' ∩ a)| (O' = the pairs of O admitted by some typing of B, the only
--      ones a∩b can hold); likewise for B (second factors). Typings of either side below r_min are
--      dropped before they are paired (the pairing is what multiplies rows).
--   2. the classes meet the surviving typing pairs by an equi-join on the premise's slot ranks (the
--      first factor of the combinations, exploded by mask_rank_table), then the exact bit test picks
--      the hypothesis typing.
-- Incremental: the relation pairs whose classes changed, and those of a relation with a typed relation
-- that became eligible (|π1|, |π2| ≥ r_min for the first time): all their typed overlaps again.
with

{% if plan.incremental %}
changed_typings as (

    select * from {{ delta_relation(ref('int_typed_relations')) }}
    where rel_id not in (select rel_id from {{ ref('int_retyped_relations') }})
        and {{ can_reach_projection_bound(delta_relation(ref('int_typed_relations'))) }}

),

previous_typings as (

    select * from {{ previous_table('int_typed_relations') }}

),

newly_eligible_relations as (

    select distinct changed_typings.rel_id
    from changed_typings
    left join previous_typings
        on changed_typings.typed_rel_id = previous_typings.typed_rel_id
    where previous_typings.typed_rel_id is null
        or not ({{ can_reach_projection_bound('previous_typings') }})

),

all_classes as (

    select * from {{ ref('int_overlap_classes') }}

),

affected_relation_pairs as (

    select relation_pair_id from {{ delta_relation(ref('int_overlap_classes')) }}

    union

    select relation_pair_id from all_classes
    where {{ relation_pair_premise('relation_pair_id') }} in (select rel_id from newly_eligible_relations)
        or {{ relation_pair_hypothesis('relation_pair_id') }} in (select rel_id from newly_eligible_relations)

),
{% endif %}

-- one import CTE per use (Postgres materialises a CTE that is read twice)
relation_pair_classes as (

    select * from {{ ref('int_overlap_classes') }}
    {%- if plan.incremental %}
    where relation_pair_id in (select relation_pair_id from affected_relation_pairs)
    {%- endif %}

),

premise_side_classes as (

    select * from {{ ref('int_overlap_classes') }}
    {%- if plan.incremental %}
    where relation_pair_id in (select relation_pair_id from affected_relation_pairs)
    {%- endif %}

),

hypothesis_side_classes as (

    select * from {{ ref('int_overlap_classes') }}
    {%- if plan.incremental %}
    where relation_pair_id in (select relation_pair_id from affected_relation_pairs)
    {%- endif %}

),

match_classes as (

    select * from {{ ref('int_overlap_classes') }}
    {%- if plan.incremental %}
    where relation_pair_id in (select relation_pair_id from affected_relation_pairs)
    {%- endif %}

),

typed_relations as (

    select * from {{ ref('int_typed_relations') }}

),

-- at most 2^k · k rows: read several times, materialised for free
mask_ranks as (

    {{ mask_rank_table(k) }}

),

relation_pairs as (

    select
        relation_pair_id,
        {{ relation_pair_premise('relation_pair_id') }} as premise_rel_id,
        {{ relation_pair_hypothesis('relation_pair_id') }} as hypothesis_rel_id,
        {{ relation_pair_alignment('relation_pair_id') }} as alignment

    from relation_pair_classes
    group by relation_pair_id

),

eligible_typings as (

    select
        typed_relations.typed_rel_id,
        typed_relations.rel_id,
        typed_relations.type_rank_a,
        typed_relations.type_rank_b

    from typed_relations
    where {{ can_reach_projection_bound('typed_relations') }}

),

-- the classes seen from each side: A's masks of x and y (first factors), and B's (second factors)
side_classes as (

    select
        relation_pair_id,
        true as is_premise,
        {{ first_factor('arg1_combinations', k) }} as arg1_mask,
        {{ first_factor('arg2_combinations', k) }} as arg2_mask,
        n_pairs,
        n_arg1 as n_arg1_entities,
        n_arg2 as n_arg2_entities

    from premise_side_classes

    union all

    select
        relation_pair_id,
        false as is_premise,
        {{ second_factor('arg1_combinations', k) }} as arg1_mask,
        {{ second_factor('arg2_combinations', k) }} as arg2_mask,
        n_pairs,
        n_arg1 as n_arg1_entities,
        n_arg2 as n_arg2_entities

    from hypothesis_side_classes

),

-- the counts per admitted (slot rank of x, slot rank of y): each class's masks exploded to ranks and
-- summed BEFORE typings are joined (at most k² rows per relation pair and side remain)
side_rank_counts as (

    select
        side_classes.relation_pair_id,
        side_classes.is_premise,
        arg1_mask_ranks.type_rank as arg1_type_rank,
        arg2_mask_ranks.type_rank as arg2_type_rank

    from side_classes
    inner join mask_ranks as arg1_mask_ranks
        on side_classes.arg1_mask = arg1_mask_ranks.mask
    inner join mask_ranks as arg2_mask_ranks
        on side_classes.arg2_mask = arg2_mask_ranks.mask
    group by
        side_classes.relation_pair_id,
        side_classes.is_premise,
        arg1_mask_ranks.type_rank,
        arg2_mask_ranks.type_rank
    having sum(side_classes.n_pairs) >= {{ var('r_min') }}
        and sum(side_classes.n_arg1_entities) >= {{ var('r_min') }}
        and sum(side_classes.n_arg2_entities) >= {{ var('r_min') }}

),

-- the typings of each side with the ranks of the slot types x and y fill (a crossed hypothesis has
-- x in its second slot)
side_typings as (

    select
        relation_pairs.relation_pair_id,
        relation_pairs.alignment,
        sides.is_premise,
        eligible_typings.typed_rel_id,
        case when sides.is_premise or relation_pairs.alignment = 'straight'
                then eligible_typings.type_rank_a
            else eligible_typings.type_rank_b
        end as arg1_type_rank,
        case when sides.is_premise or relation_pairs.alignment = 'straight'
                then eligible_typings.type_rank_b
            else eligible_typings.type_rank_a
        end as arg2_type_rank

    -- two constant rows in a subquery (kept as tuned, docs/performance.md)
    from relation_pairs
    cross join (  -- noqa: ST05
        select true as is_premise
        union all
        select false as is_premise
    ) as sides
    inner join eligible_typings
        on eligible_typings.rel_id = case when sides.is_premise
                then relation_pairs.premise_rel_id
            else relation_pairs.hypothesis_rel_id
        end

),

side_survivors as (

    select
        side_typings.relation_pair_id,
        side_typings.alignment,
        side_typings.is_premise,
        side_typings.typed_rel_id,
        side_typings.arg1_type_rank,
        side_typings.arg2_type_rank

    from side_rank_counts
    inner join side_typings
        on side_rank_counts.relation_pair_id = side_typings.relation_pair_id
        and side_rank_counts.is_premise = side_typings.is_premise
        and side_rank_counts.arg1_type_rank = side_typings.arg1_type_rank
        and side_rank_counts.arg2_type_rank = side_typings.arg2_type_rank

),

-- typing pairs left to count, with the bit of their (A, B) slot type combination for x and for y
typing_pairs as (

    select
        premise.relation_pair_id,
        premise.alignment,
        premise.typed_rel_id as premise_typed_rel_id,
        hypothesis.typed_rel_id as hypothesis_typed_rel_id,
        premise.arg1_type_rank as premise_arg1_type_rank,
        premise.arg2_type_rank as premise_arg2_type_rank,
        (premise.arg1_type_rank - 1) * {{ k }} + hypothesis.arg1_type_rank - 1 as arg1_combination,
        (premise.arg2_type_rank - 1) * {{ k }} + hypothesis.arg2_type_rank - 1 as arg2_combination

    from side_survivors as premise
    inner join side_survivors as hypothesis
        on premise.relation_pair_id = hypothesis.relation_pair_id
    where premise.is_premise
        and not hypothesis.is_premise

),

-- the premise typings each class can hold: its first factors exploded to slot ranks
class_premise_ranks as (

    select
        count_classes.*,
        arg1_mask_ranks.type_rank as premise_arg1_type_rank,
        arg2_mask_ranks.type_rank as premise_arg2_type_rank

    from match_classes as count_classes
    inner join mask_ranks as arg1_mask_ranks
        on {{ first_factor('count_classes.arg1_combinations', k) }} = arg1_mask_ranks.mask
    inner join mask_ranks as arg2_mask_ranks
        on {{ first_factor('count_classes.arg2_combinations', k) }} = arg2_mask_ranks.mask

),

class_matches as (

    select
        typing_pairs.relation_pair_id,
        typing_pairs.premise_typed_rel_id,
        typing_pairs.hypothesis_typed_rel_id,
        typing_pairs.alignment,
        class_premise_ranks.n_pairs,
        class_premise_ranks.n_arg1,
        class_premise_ranks.n_arg2,
        class_premise_ranks.n_entities

    from class_premise_ranks
    inner join typing_pairs
        on class_premise_ranks.relation_pair_id = typing_pairs.relation_pair_id
        and class_premise_ranks.premise_arg1_type_rank = typing_pairs.premise_arg1_type_rank
        and class_premise_ranks.premise_arg2_type_rank = typing_pairs.premise_arg2_type_rank
    where {{ bit_is_set('class_premise_ranks.arg1_combinations', 'typing_pairs.arg1_combination') }}
        and {{ bit_is_set('class_premise_ranks.arg2_combinations', 'typing_pairs.arg2_combination') }}

),

typed_overlaps as (

    select
        relation_pair_id,
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        sum(n_pairs) as overlap_size,
        sum(n_arg1) as n_overlap_arg1,
        sum(n_arg2) as n_overlap_arg2,
        sum(n_entities) as n_overlap_entities

    from class_matches
    group by
        relation_pair_id,
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment

),

canonical_overlaps as (

    select
        relation_pair_id,
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        cast(overlap_size as bigint) as overlap_size,
        cast(n_overlap_arg1 as bigint) as n_overlap_arg1,
        cast(n_overlap_arg2 as bigint) as n_overlap_arg2,
        cast(n_overlap_entities as bigint) as n_overlap_entities

    from typed_overlaps
    where overlap_size >= {{ var('r_min') }}
        and n_overlap_arg1 >= {{ var('r_min') }}
        and n_overlap_arg2 >= {{ var('r_min') }}

),

-- int_relation_overlaps has each relation pair in one direction; B ⇒ A has the same overlap as
-- A ⇒ B (reversed when crossed: B's first arguments are A's second ones)
final as (

    select * from canonical_overlaps

    union all

    select
        relation_pair_id,
        hypothesis_typed_rel_id as premise_typed_rel_id,
        premise_typed_rel_id as hypothesis_typed_rel_id,
        alignment,
        overlap_size,
        case when alignment = 'crossed' then n_overlap_arg2 else n_overlap_arg1 end as n_overlap_arg1,
        case when alignment = 'crossed' then n_overlap_arg1 else n_overlap_arg2 end as n_overlap_arg2,
        n_overlap_entities

    from canonical_overlaps

)

select * from final
