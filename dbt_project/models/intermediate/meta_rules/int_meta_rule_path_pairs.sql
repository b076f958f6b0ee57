-- The untyped path pairs behind the InfCands (a rule between paths, whatever the types), with the
-- number of typed InfCands behind each.

with

candidates as (

    select * from {{ ref('inference_candidates') }}

),

pairs as (

    select
        premise_path,
        hypothesis_path,
        alignment,
        count(*) as n_infcands

    from candidates
    group by premise_path, hypothesis_path, alignment

)

select * from pairs
