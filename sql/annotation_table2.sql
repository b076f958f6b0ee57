-- The paper's Table 2 for the annotated items: one row per task and split, after
-- `sherliic-annotate aggregate` (dbt tag:annotation).
select
    task,
    split,
    max(case when statistic = 'n_items' then value end) as gold_items,
    max(case when statistic = 'n_yes' then value end) as yes,
    max(case when statistic = 'n_no' then value end) as no,
    round(cast(max(case when statistic = 'share_yes' then value end) as numeric), 3) as share_yes,
    max(case when statistic = 'n_disagr_0' then value end) as disagreements_0,
    max(case when statistic = 'n_disagr_1' then value end) as disagreements_1,
    max(case when statistic = 'n_disagr_2' then value end) as disagreements_2,
    max(case when statistic = 'n_judgements' then value end) as judgements,
    max(case when statistic = 'n_workers' then value end) as workers,
    max(case when statistic = 'n_workers_excluded' then value end) as workers_excluded,
    max(case when statistic = 'n_excluded_incomprehensible' then value end) as incomprehensible,
    max(case when statistic = 'n_requeue' then value end) as requeued
from warehouse.annotation_statistics
group by task, split
order by task, case split when 'all' then 0 when 'dev' then 1 else 2 end;
