-- Gold items in the 22-column SherLIiC dev/test CSV layout (docs/design.md §5), one row per item with its
-- split; `sherliic-annotate export-dataset` writes dev.csv and test.csv from it. Relation ids and
-- tsg indexes refer to the warehouse build the batch was sampled from; paths are canonical, so
-- is_*_reversed is false except for double-subject paths.

with

items as (

    select * from {{ ref('stg_annotation__items') }}

),

item_tasks as (

    select * from {{ ref('int_annotation_items') }}

),

split as (

    select * from {{ ref('annotation_split') }}

),

joined as (

    select
        split.task,
        split.split,
        items.item_id,
        items.premise_tsg_index as prem_type,
        items.premise_rel_id as prem_rel,
        items.hypothesis_tsg_index as hypo_type,
        items.hypothesis_rel_id as hypo_rel,
        items.prem_argleft,
        items.prem_middle,
        items.prem_argright,
        items.prem_end,
        items.hypo_argleft,
        items.hypo_middle,
        items.hypo_argright,
        items.hypo_end,
        {{ strip_up_marker(path_element('items.premise_path', -1)) }} in ('nsubj', 'nsubjpass') as is_prem_reversed,
        {{ strip_up_marker(path_element('items.hypothesis_path', -1)) }} in ('nsubj', 'nsubjpass') as is_hypo_reversed,
        items.examples_a,
        items.examples_b,
        split.gold_label,
        items.relv as rel_score,
        items.sigma as sign_score,
        items.esr as esr_score,
        split.num_disagr

    from split
    inner join item_tasks
        on split.item_id = item_tasks.item_id and split.task = item_tasks.task
    inner join items
        on split.item_id = items.item_id

),

numbered as (

    select
        row_number() over (partition by joined.task, joined.split order by joined.item_id) - 1 as id,
        joined.*

    from joined

)

select * from numbered
