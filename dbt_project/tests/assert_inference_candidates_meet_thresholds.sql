-- Every InfCand meets all six acceptance criteria (docs/design.md §5) for the vars of this run, and the
-- top-N cut. Criterion 1 is re-checked from typed_relations' signatures (⊤ compatible with all).
with

candidates as (

    select * from {{ ref('inference_candidates') }}

),

typed_relations as (

    select * from {{ ref('typed_relations') }}

),

checked as (

    select
        candidates.premise_typed_rel_id,
        candidates.hypothesis_typed_rel_id,
        candidates.alignment,
        (
            {{ arrays_overlap('premise.tsg_a', "case when candidates.alignment = 'straight' then hypothesis.tsg_a else hypothesis.tsg_b end") }}
            or {{ array_has('premise.tsg_a', top_type()) }}
            or {{ array_has("case when candidates.alignment = 'straight' then hypothesis.tsg_a else hypothesis.tsg_b end", top_type()) }}
        ) as slot1_compatible,
        (
            {{ arrays_overlap('premise.tsg_b', "case when candidates.alignment = 'straight' then hypothesis.tsg_b else hypothesis.tsg_a end") }}
            or {{ array_has('premise.tsg_b', top_type()) }}
            or {{ array_has("case when candidates.alignment = 'straight' then hypothesis.tsg_b else hypothesis.tsg_a end", top_type()) }}
        ) as slot2_compatible,
        candidates.overlap_size,
        candidates.n_overlap_arg1,
        candidates.n_overlap_arg2,
        candidates.relv,
        candidates.sigma,
        candidates.esr,
        candidates.rank_for_hypothesis,
        candidates.premise_size = premise.n_entity_pairs as premise_size_matches,
        candidates.hypothesis_size = hypothesis.n_entity_pairs as hypothesis_size_matches

    from candidates
    inner join typed_relations as premise
        on candidates.premise_typed_rel_id = premise.typed_rel_id
    inner join typed_relations as hypothesis
        on candidates.hypothesis_typed_rel_id = hypothesis.typed_rel_id

)

select * from checked
where not slot1_compatible
    or not slot2_compatible
    or overlap_size < {{ var('r_min') }}
    or n_overlap_arg1 < {{ var('r_min') }}
    or n_overlap_arg2 < {{ var('r_min') }}
    or relv < {{ var('min_relv') }}
    or sigma < {{ var('min_sigma') }}
    or esr < {{ var('min_esr') }}
    or rank_for_hypothesis > {{ var('top_n_premises') }}
    or not premise_size_matches
    or not hypothesis_size_matches
