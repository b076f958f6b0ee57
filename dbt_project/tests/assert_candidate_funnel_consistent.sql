-- The funnel's threshold steps (typed relation pairs) never grow, and its last step counts the InfCands.
with

funnel as (

    select * from {{ ref('candidate_funnel') }}

),

candidates as (

    select count(*) as n_candidates from {{ ref('inference_candidates') }}

),

ordered as (

    select
        step_number,
        step,
        n_rows,
        lag(n_rows) over (order by step_number) as previous_rows

    from funnel

),

growing as (

    select
        step,
        n_rows
    from ordered
    where step_number between 6 and 10 and n_rows > previous_rows

),

miscounted as (

    select
        funnel.step,
        funnel.n_rows
    from funnel
    cross join candidates
    where funnel.step = 'inference_candidates' and funnel.n_rows <> candidates.n_candidates

)

select * from growing
union all
select * from miscounted
