-- The statistics of the paper's Table 2, in long format (task, split, statistic, value):
-- per split (all / dev / test) the gold items, yes/no counts and shares and the distribution of
-- disagreements; for 'all' also the annotation effort (sampled items, judgements, workers, exclusions).

with

items as (

    select * from {{ ref('int_annotation_items') }}

),

judgements as (

    select * from {{ ref('stg_annotation__judgements') }}

),

labels as (

    select * from {{ ref('annotation_item_labels') }}

),

split as (

    select * from {{ ref('annotation_split') }}

),

trust as (

    select * from {{ ref('annotation_worker_trust') }}

),

gold as (

    select
        task,
        split,
        gold_label,
        num_disagr
    from split
    union all
    select
        task,
        'all' as split,
        gold_label,
        num_disagr
    from split

),

gold_stats as (

    select
        task,
        split,
        count(*) as n_items,
        sum(case when gold_label = 'yes' then 1 else 0 end) as n_yes,
        sum(case when gold_label = 'no' then 1 else 0 end) as n_no,
        sum(case when num_disagr = 0 then 1 else 0 end) as n_disagr_0,
        sum(case when num_disagr = 1 then 1 else 0 end) as n_disagr_1,
        sum(case when num_disagr >= 2 then 1 else 0 end) as n_disagr_2

    from gold
    group by task, split

),

gold_long as (

    select
        task,
        split,
        'n_items' as statistic,
        cast(n_items as {{ type_double() }}) as value
    from gold_stats
    union all
    select
        task,
        split,
        'n_yes' as statistic,
        n_yes as value
    from gold_stats
    union all
    select
        task,
        split,
        'n_no' as statistic,
        n_no as value
    from gold_stats
    union all
    select
        task,
        split,
        'share_yes' as statistic,
        cast(n_yes as {{ type_double() }}) / n_items as value
    from gold_stats
    union all
    select
        task,
        split,
        'n_disagr_0' as statistic,
        n_disagr_0 as value
    from gold_stats
    union all
    select
        task,
        split,
        'n_disagr_1' as statistic,
        n_disagr_1 as value
    from gold_stats
    union all
    select
        task,
        split,
        'n_disagr_2' as statistic,
        n_disagr_2 as value
    from gold_stats
    union all
    select
        task,
        split,
        'share_unanimous' as statistic,
        cast(n_disagr_0 as {{ type_double() }}) / n_items as value
    from gold_stats

),

effort_long as (

    select
        task,
        'all' as split,
        'n_sampled' as statistic,
        cast(count(*) as {{ type_double() }}) as value
    from items
    group by task
    union all
    select
        task,
        'all' as split,
        'n_judgements' as statistic,
        count(*) as value
    from judgements
    group by task
    union all
    select
        task,
        'all' as split,
        'n_workers' as statistic,
        count(*) as value
    from trust
    group by task
    union all
    select
        task,
        'all' as split,
        'n_workers_excluded' as statistic,
        sum(case when is_trusted then 0 else 1 end) as value
    from trust
    group by task
    union all
    select
        task,
        'all' as split,
        'mean_worker_trust' as statistic,
        avg(trust) as value
    from trust
    group by task
    union all
    select
        task,
        'all' as split,
        'n_excluded_incomprehensible' as statistic,
        sum(case when status = 'incomprehensible' then 1 else 0 end) as value
    from labels
    group by task
    union all
    select
        task,
        'all' as split,
        'n_requeue' as statistic,
        sum(case when status = 'requeue' then 1 else 0 end) as value
    from labels
    group by task

),

final as (

    select * from gold_long
    union all
    select * from effort_long

)

select * from final
