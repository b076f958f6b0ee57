{{ config(materialized='view') }}
-- Every inference candidate with each verifier's score beside the paper's Relv, σ and esr: one row per
-- candidate, verifier and scoring backend that ranked it. A view over the scores `make rank` writes to
-- results.verifier_scores (the rows of this build: stg_results__verifier_scores), so it shows the latest
-- scores without a dbt run, and ranking never rebuilds (nor records) a build. Candidates no verifier
-- scored yet are left out. It reads this build's inference_candidates: a build that replaces them
-- rebuilds this view too (tag:teg selects both).
with

candidates as (

    select * from {{ ref('inference_candidates') }}

),

scores as (

    select * from {{ ref('stg_results__verifier_scores') }}

),

verifiers as (

    select * from {{ ref('stg_results__verifiers') }}

),

joined as (

    select
        candidates.candidate_key,
        candidates.premise_typed_rel_id,
        candidates.hypothesis_typed_rel_id,
        candidates.alignment,
        candidates.premise_path,
        candidates.hypothesis_path,
        candidates.premise_type_a,
        candidates.premise_type_b,
        candidates.hypothesis_type_a,
        candidates.hypothesis_type_b,
        candidates.relv,
        candidates.sigma,
        candidates.esr,
        candidates.score,
        candidates.rank_for_hypothesis,
        scores.verifier_key,
        verifiers.verifier_name,
        scores.backend,
        scores.verifier_score,
        scores.premise_sentence,
        scores.hypothesis_sentence

    from candidates
    inner join scores
        on candidates.candidate_key = scores.candidate_key
    inner join verifiers
        on scores.verifier_key = verifiers.verifier_key

),

final as (

    select
        *,
        -- the premise's place among the hypothesis' premises by the verifier (1 = most entailing)
        cast(row_number() over (
            partition by verifier_key, backend, hypothesis_typed_rel_id
            order by verifier_score desc, rank_for_hypothesis asc
        ) as integer) as verifier_rank_for_hypothesis

    from joined

)

select * from final
