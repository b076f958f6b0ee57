{{ config(post_hook="{{ analyze_table() }}") }}
-- Paper §2.3: accepted candidates (all six criteria), ranked per hypothesis by Relv·σ·esr
-- (ties: premise_typed_rel_id, then alignment), premises with the hypothesis' path dropped (already
-- left out in int_typed_overlaps; re-checked here), best top_n_premises kept.
with

scores as (

    select * from {{ ref('int_candidate_scores') }}

),

accepted as (

    select * from scores
    where is_accepted
        and premise_rel_id <> hypothesis_rel_id

),

ranked as (

    select
        *,
        cast(row_number() over (
            partition by hypothesis_typed_rel_id
            order by score desc, premise_typed_rel_id asc, alignment asc
        ) as integer) as rank_for_hypothesis

    from accepted

),

top_n as (

    select * from ranked
    where rank_for_hypothesis <= {{ var('top_n_premises') }}

)

select * from top_n
