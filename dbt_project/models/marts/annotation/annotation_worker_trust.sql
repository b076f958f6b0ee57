-- Worker trust (paper §3): the share of a worker's answers that equal the item's majority answer,
-- over items with at least `annotation_min_judgements` judgements and a strict majority.
-- Workers below `annotation_min_trust` (0.8) are excluded; a worker with no comparable answer yet
-- (trust null) is not excluded.

with

judgements as (

    select * from {{ ref('stg_annotation__judgements') }}

),

majority as (

    select * from {{ ref('int_annotation_first_majority') }}

),

compared as (

    select
        judgements.task,
        judgements.worker_id,
        judgements.answer,
        majority.majority_answer,
        case
            when majority.n_judgements >= {{ var('annotation_min_judgements') }}
                and majority.majority_answer is not null then 1
            else 0
        end as is_comparable

    from judgements
    inner join majority
        on judgements.task = majority.task and judgements.item_id = majority.item_id

),

per_worker as (

    select
        task,
        worker_id,
        count(*) as n_judgements,
        sum(is_comparable) as n_compared,
        sum(case when is_comparable = 1 and answer = majority_answer then 1 else 0 end) as n_agree

    from compared
    group by task, worker_id

),

trust as (

    select
        task,
        worker_id,
        n_judgements,
        n_compared,
        n_agree,
        case when n_compared > 0 then cast(n_agree as {{ type_double() }}) / n_compared end as trust,
        case
            when n_compared = 0 then true
            else cast(n_agree as {{ type_double() }}) / n_compared >= {{ var('annotation_min_trust') }}
        end as is_trusted

    from per_worker

)

select * from trust
