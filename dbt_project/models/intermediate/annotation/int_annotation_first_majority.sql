-- First pass (paper §3): the majority answer of each item over ALL its judgements; the workers'
-- trust is measured against it. An item has a majority only if one answer is strictly most frequent.

with

judgements as (

    select * from {{ ref('stg_annotation__judgements') }}

),

counts as (

    select
        task,
        item_id,
        count(*) as n_judgements,
        sum(case when answer = 'yes' then 1 else 0 end) as n_yes,
        sum(case when answer = 'no' then 1 else 0 end) as n_no,
        sum(case when answer = 'incomprehensible' then 1 else 0 end) as n_incomprehensible

    from judgements
    group by task, item_id

),

majority as (

    select
        task,
        item_id,
        n_judgements,
        n_yes,
        n_no,
        n_incomprehensible,
        case
            when n_yes > n_no and n_yes > n_incomprehensible then 'yes'
            when n_no > n_yes and n_no > n_incomprehensible then 'no'
            when n_incomprehensible > n_yes and n_incomprehensible > n_no then 'incomprehensible'
        end as majority_answer

    from counts

)

select * from majority
