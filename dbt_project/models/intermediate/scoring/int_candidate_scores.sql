{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Paper §2.3 scores for every overlap, plus one flag per acceptance criterion (docs/design.md §5).
--   P(B|A) = |A∩B|/|A|,  P(B) = |B|/|E|²,  Relv(A,B) = P(B|A)/P(B) = |A∩B|·|E|²/(|A|·|B|)
--   Relv(A,¬B) = (1 − P(B|A)) / (1 − P(B))
--   σ(A,B) = P(B|A)·lrs(A,B) = 2|A∩B| · [P(B|A)·ln Relv(A,B) + (1 − P(B|A))·ln Relv(A,¬B)]
--            where a term with P(H|A) = 0 contributes 0 (here: the ¬B term when A ⊆ B)
--   esr(A,B) = |π1(A∩B) ∪ π2(A∩B)| / (2|A∩B|)
-- Type compatibility (criterion 1): the tsg components of the aligned slots share a type, or one of
-- them is {⊤} (docs/design.md §4: ⊤ is compatible with every type). Crossed rules compare A's slot 1 with
-- B's slot 2 and vice versa (x is A's first and B's second argument).
with

pair_overlaps as (

    select * from {{ ref('int_typed_overlaps') }}

),

-- one import CTE per use: Postgres materialises a CTE that is read twice, and a plan that scans a
-- materialised CTE runs in one process. This model runs near the end of the build, often with a core
-- to spare: at 5M instances it takes 3.0 s in parallel, 4.7 s in one process (measured alone)
premise_relations as (

    select * from {{ ref('int_typed_relations') }}

),

hypothesis_relations as (

    select * from {{ ref('int_typed_relations') }}

),

premise_signatures as (

    select * from {{ ref('int_type_signatures') }}

),

hypothesis_signatures as (

    select * from {{ ref('int_type_signatures') }}

),

entity_keys as (

    select * from {{ ref('int_entity_keys') }}

),

-- computed once: the scalar subquery below is copied into every expression that uses n_entities, and
-- each of its 39 copies counted the entity keys again, with its own parallel workers (at 5M instances,
-- 1.5 s before the overlaps were read; 0.2 s now)
graph as {{ computed_once() }} (

    select cast(count(*) as {{ type_double() }}) as n_entities
    from entity_keys

),

joined as (

    select
        pair_overlaps.premise_typed_rel_id,
        pair_overlaps.hypothesis_typed_rel_id,
        pair_overlaps.alignment,
        premise.rel_id as premise_rel_id,
        hypothesis.rel_id as hypothesis_rel_id,
        premise.n_entity_pairs as premise_size,
        hypothesis.n_entity_pairs as hypothesis_size,
        pair_overlaps.overlap_size,
        pair_overlaps.n_overlap_arg1,
        pair_overlaps.n_overlap_arg2,
        pair_overlaps.n_overlap_entities,
        -- a scalar subquery (computed once, before the parallel part), not a cross join: an aggregate
        -- joined to the overlaps kept the plan in one process
        (select graph.n_entities from graph) as n_entities,
        premise_tsg.tsg_a as premise_tsg_a,
        premise_tsg.tsg_b as premise_tsg_b,
        case when pair_overlaps.alignment = 'straight' then hypothesis_tsg.tsg_a else hypothesis_tsg.tsg_b end
            as hypothesis_tsg_x,
        case when pair_overlaps.alignment = 'straight' then hypothesis_tsg.tsg_b else hypothesis_tsg.tsg_a end
            as hypothesis_tsg_y

    from pair_overlaps
    inner join premise_relations as premise
        on pair_overlaps.premise_typed_rel_id = premise.typed_rel_id
    inner join hypothesis_relations as hypothesis
        on pair_overlaps.hypothesis_typed_rel_id = hypothesis.typed_rel_id
    inner join premise_signatures as premise_tsg
        on pair_overlaps.premise_typed_rel_id = premise_tsg.typed_rel_id
    inner join hypothesis_signatures as hypothesis_tsg
        on pair_overlaps.hypothesis_typed_rel_id = hypothesis_tsg.typed_rel_id

),

-- Each ratio is formed from integers in one division (|E|² stays exact in double precision up to
-- |E| ≈ 9.5e7), so the scores are correctly rounded before the logarithms.
probabilities as (

    select
        *,
        n_entities * n_entities as n_entity_pairs_total,
        cast(overlap_size as {{ type_double() }}) / premise_size as p_b_given_a,
        cast(hypothesis_size as {{ type_double() }}) / (n_entities * n_entities) as p_b

    from joined

),

relevance as (

    select
        *,
        (overlap_size * n_entity_pairs_total) / (cast(premise_size as {{ type_double() }}) * hypothesis_size)
            as relv,
        case
            when overlap_size < premise_size
                then ((premise_size - overlap_size) * n_entity_pairs_total)
                    / (cast(premise_size as {{ type_double() }}) * (n_entity_pairs_total - hypothesis_size))
        end as relv_not_b

    from probabilities

),

scored as (

    select
        *,
        2 * overlap_size * (
            p_b_given_a * ln(relv)
            + case
                when overlap_size < premise_size
                    then (cast(premise_size - overlap_size as {{ type_double() }}) / premise_size) * ln(relv_not_b)
                else 0
            end
        ) as sigma,
        cast(n_overlap_entities as {{ type_double() }}) / (2 * overlap_size) as esr

    from relevance

),

flagged as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        premise_rel_id,
        hypothesis_rel_id,
        premise_size,
        hypothesis_size,
        overlap_size,
        n_overlap_arg1,
        n_overlap_arg2,
        n_overlap_entities,
        cast(n_entities as bigint) as n_entities,
        p_b_given_a,
        p_b,
        relv,
        relv_not_b,
        sigma,
        esr,
        relv * sigma * esr as score,
        (
            (
                {{ arrays_overlap('premise_tsg_a', 'hypothesis_tsg_x') }}
                or {{ array_has('premise_tsg_a', top_type()) }}
                or {{ array_has('hypothesis_tsg_x', top_type()) }}
            )
            and (
                {{ arrays_overlap('premise_tsg_b', 'hypothesis_tsg_y') }}
                or {{ array_has('premise_tsg_b', top_type()) }}
                or {{ array_has('hypothesis_tsg_y', top_type()) }}
            )
        ) as passes_types,
        overlap_size >= {{ var('r_min') }} as passes_overlap,
        (
            n_overlap_arg1 >= {{ var('r_min') }}
            and n_overlap_arg2 >= {{ var('r_min') }}
        ) as passes_projections,
        relv >= {{ var('min_relv') }} as passes_relv,
        sigma >= {{ var('min_sigma') }} as passes_sigma,
        esr >= {{ var('min_esr') }} as passes_esr

    from scored

),

final as (

    select
        *,
        (
            passes_types
            and passes_overlap
            and passes_projections
            and passes_relv
            and passes_sigma
            and passes_esr
        ) as is_accepted

    from flagged

)

select * from final
