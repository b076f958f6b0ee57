{{ config(post_hook="{{ analyze_table() }}") }}
-- One row per rule between relations: premise path ⇒ hypothesis path with an alignment, aggregated over
-- the typed InfCands that state it (one per pair of typings). What people read, and what SherLIiC's
-- released rule lists hold; inference_candidates keeps the rows per typing.
with

candidates as (

    select * from {{ ref('inference_candidates') }}

),

relations as (

    select * from {{ ref('relations') }}

),

typed as (

    select
        *,
        concat('(', premise_type_a, ', ', premise_type_b, ') => (', hypothesis_type_a, ', ', hypothesis_type_b, ')')
            as typing,
        row_number() over (
            partition by premise_rel_id, hypothesis_rel_id, alignment
            order by score desc, premise_typed_rel_id asc, hypothesis_typed_rel_id asc
        ) as typing_rank

    from candidates

),

aggregated as (

    select
        premise_rel_id,
        hypothesis_rel_id,
        alignment,
        count(*) as n_typings,
        {{ sorted_set_agg('typing') }} as typings,
        max(score) as best_score,
        sum(score) as summed_score,
        min(rank_for_hypothesis) as best_rank_for_hypothesis

    from typed
    group by premise_rel_id, hypothesis_rel_id, alignment

),

best as (

    select * from typed
    where typing_rank = 1

),

final as (

    select
        best.premise_rel_id,
        best.hypothesis_rel_id,
        best.alignment,
        best.premise_path,
        best.hypothesis_path,
        cast(aggregated.n_typings as bigint) as n_typings,
        aggregated.typings,
        best.typing as best_typing,
        best.relv as best_relv,
        best.sigma as best_sigma,
        best.esr as best_esr,
        aggregated.best_score,
        aggregated.summed_score,
        cast(aggregated.best_rank_for_hypothesis as integer) as best_rank_for_hypothesis,
        premise.relation_key as premise_key,
        hypothesis.relation_key as hypothesis_key,
        {{ surrogate_key(['premise.relation_key', 'hypothesis.relation_key', 'best.alignment']) }} as rule_key

    from best
    inner join aggregated
        on best.premise_rel_id = aggregated.premise_rel_id
        and best.hypothesis_rel_id = aggregated.hypothesis_rel_id
        and best.alignment = aggregated.alignment
    inner join relations as premise
        on best.premise_rel_id = premise.rel_id
    inner join relations as hypothesis
        on best.hypothesis_rel_id = hypothesis.rel_id

)

select * from final
