{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Untyped stage of A∩B (paper §2.3): the entity pairs shared by two relations of DIFFERENT paths,
-- for relation pairs whose untyped overlap can still pass criteria 2-3 (every typed overlap is a
-- subset of its untyped one). int_typed_overlaps expands these pairs to typed relations.
-- Both alignments: straight A(x,y) ⇒ B(x,y): A∩B = A ∩ B; crossed A(x,y) ⇒ B(y,x):
-- A∩B = {(x,y) ∈ A : (y,x) ∈ B}; (arg1, arg2) is in the premise's orientation,
-- hypothesis_arg1/2 in the hypothesis'. Same-path pairs are skipped: the paper drops premises with
-- the hypothesis' path before the top-N cut, so they can never be InfCands.
-- Each unordered relation pair appears once, with premise_rel_id < hypothesis_rel_id: the rule in the
-- other direction has the same overlap (reversed when crossed), so int_typed_overlaps counts it once
-- and adds the mirrored rule (half the work of this and the typed stage).
--
-- Why the steps (a naive typed self-join on the pair explodes on hub pairs and spills):
--   1. eligible_pairs: only pairs of typed relations that could still reach the r_min bounds
--      (|T| ≥ r_min is already true; also |π1(T)|, |π2(T)| ≥ r_min), as integer keys.
--   2. shared_keys: only unordered pairs {x,y} seen in ≥ 2 relations can be in any overlap of two
--      different relations (covers straight and crossed) - most pairs occur in one relation only.
--   3. relation_overlaps: overlaps on UNTYPED relations first (one row per shared pair and relation
--      pair instead of one per typing pair, up to (k+1)² times fewer), pruned by the r_min bounds;
--      every typed overlap is a subset of its untyped one, so nothing valid is lost.
--   4. relation_overlap_pairs: only the A∩B pairs of surviving relation pairs go on to be expanded to
--      typings (int_typed_overlaps); joining whole typed relations per surviving relation pair instead
--      multiplied big relations by their number of partners.
-- A separate table (not a CTE) so the planner has statistics for the typed stage.
with

typed_pairs as (

    select * from {{ ref('int_typed_relation_pairs') }}

),

typed_relations as (

    select * from {{ ref('int_typed_relations') }}

),

eligible_typed_pairs as (

    {{ eligible_typed_pairs('typed_pairs', 'typed_relations') }}

),

eligible_pairs as (

    select distinct
        rel_id,
        arg1_entity_id,
        arg2_entity_id,
        least(arg1_entity_id, arg2_entity_id) as low_entity_id,
        greatest(arg1_entity_id, arg2_entity_id) as high_entity_id

    from eligible_typed_pairs

),

shared_keys as (

    select
        low_entity_id,
        high_entity_id

    from eligible_pairs
    group by
        low_entity_id,
        high_entity_id
    having count(distinct rel_id) >= 2

),

shared_pairs as (

    select
        eligible_pairs.rel_id,
        eligible_pairs.arg1_entity_id,
        eligible_pairs.arg2_entity_id

    from eligible_pairs
    inner join shared_keys
        on eligible_pairs.low_entity_id = shared_keys.low_entity_id
        and eligible_pairs.high_entity_id = shared_keys.high_entity_id

),

relation_joined as (

    -- hypothesis_arg1/2: the pair in the hypothesis' own orientation ((y, x) for crossed)
    select
        premise.rel_id as premise_rel_id,
        hypothesis.rel_id as hypothesis_rel_id,
        'straight' as alignment,
        premise.arg1_entity_id,
        premise.arg2_entity_id,
        hypothesis.arg1_entity_id as hypothesis_arg1_entity_id,
        hypothesis.arg2_entity_id as hypothesis_arg2_entity_id

    from shared_pairs as premise
    inner join shared_pairs as hypothesis
        on premise.arg1_entity_id = hypothesis.arg1_entity_id
        and premise.arg2_entity_id = hypothesis.arg2_entity_id
        and premise.rel_id < hypothesis.rel_id

    union all

    select
        premise.rel_id as premise_rel_id,
        hypothesis.rel_id as hypothesis_rel_id,
        'crossed' as alignment,
        premise.arg1_entity_id,
        premise.arg2_entity_id,
        hypothesis.arg1_entity_id as hypothesis_arg1_entity_id,
        hypothesis.arg2_entity_id as hypothesis_arg2_entity_id

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
        alignment,
        -- one integer key per relation pair and alignment: the typed stage joins and groups on it
        -- (and the planner estimates one column far better than three correlated ones)
        cast(row_number() over (order by premise_rel_id, hypothesis_rel_id, alignment) as integer)
            as relation_pair_id

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
        relation_overlaps.relation_pair_id,
        relation_joined.*

    from relation_joined
    inner join relation_overlaps
        on relation_joined.premise_rel_id = relation_overlaps.premise_rel_id
        and relation_joined.hypothesis_rel_id = relation_overlaps.hypothesis_rel_id
        and relation_joined.alignment = relation_overlaps.alignment

)

select * from relation_overlap_pairs
