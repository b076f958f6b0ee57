-- Gold labels (paper §3): the majority of the judgements of trusted workers, given at least
-- `annotation_min_judgements` (5) yes/no judgements. Interpretation: an item flagged
-- incomprehensible by more than `annotation_max_incomprehensible` (0) trusted workers is excluded,
-- so a gold item's num_disagr (judgements against the gold label) is 0, 1 or 2 with 5 judgements.
-- Items with too few trusted judgements (e.g. after excluding untrusted workers) or a tie are
-- re-queued: n_missing more judgements are needed.

with

items as (

    select * from {{ ref('int_annotation_items') }}

),

judgements as (

    select * from {{ ref('stg_annotation__judgements') }}

),

trust as (

    select * from {{ ref('annotation_worker_trust') }}

),

valid as (

    select
        judgements.task,
        judgements.item_id,
        judgements.answer,
        case when trust.is_trusted then 1 else 0 end as is_valid

    from judgements
    inner join trust
        on judgements.task = trust.task and judgements.worker_id = trust.worker_id

),

counts as (

    select
        items.task,
        items.item_id,
        items.batch_name,
        coalesce(sum(valid.is_valid), 0) as n_valid_judgements,
        coalesce(sum(1 - valid.is_valid), 0) as n_excluded_judgements,
        coalesce(sum(case when valid.is_valid = 1 and valid.answer = 'yes' then 1 else 0 end), 0) as n_yes,
        coalesce(sum(case when valid.is_valid = 1 and valid.answer = 'no' then 1 else 0 end), 0) as n_no,
        coalesce(sum(
            case when valid.is_valid = 1 and valid.answer = 'incomprehensible' then 1 else 0 end
        ), 0) as n_incomprehensible

    from items
    left join valid
        on items.task = valid.task and items.item_id = valid.item_id
    group by items.task, items.item_id, items.batch_name

),

labelled as (

    select
        task,
        item_id,
        batch_name,
        n_valid_judgements,
        n_excluded_judgements,
        n_yes,
        n_no,
        n_incomprehensible,
        case
            when n_incomprehensible > {{ var('annotation_max_incomprehensible') }} then 'incomprehensible'
            when n_yes + n_no >= {{ var('annotation_min_judgements') }} and n_yes <> n_no then 'gold'
            else 'requeue'
        end as status

    from counts

),

final as (

    select
        task,
        item_id,
        batch_name,
        n_valid_judgements,
        n_excluded_judgements,
        n_yes,
        n_no,
        n_incomprehensible,
        status,
        case when status = 'gold' then (case when n_yes > n_no then 'yes' else 'no' end) end as gold_label,
        case when status = 'gold' then (case when n_yes > n_no then n_no else n_yes end) end as num_disagr,
        case
            when status <> 'requeue' then 0
            when n_yes + n_no < {{ var('annotation_min_judgements') }}
                then {{ var('annotation_min_judgements') }} - (n_yes + n_no)
            else 1
        end as n_missing

    from labelled

)

select * from final
