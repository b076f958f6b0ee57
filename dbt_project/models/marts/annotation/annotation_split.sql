-- 25:75 dev/test split of the gold items (paper §3), stratified on gold label × number of
-- disagreements (0 / 1 / 2+), reproducible: within each stratum items are ordered by
-- md5(seed:item_id) and the first round(n · annotation_dev_share) go to dev.

with

labels as (

    select * from {{ ref('annotation_item_labels') }}
    where status = 'gold'

),

stratified as (

    select
        task,
        item_id,
        gold_label,
        num_disagr,
        gold_label || '/' || cast(least(num_disagr, 2) as {{ dbt.type_string() }}) as stratum,
        md5({{ sql_string_literal(var('annotation_split_seed')) }} || ':' || item_id) as draw

    from labels

),

ranked as (

    select
        task,
        item_id,
        gold_label,
        num_disagr,
        stratum,
        row_number() over (partition by task, stratum order by draw, item_id) as rank_in_stratum,
        count(*) over (partition by task, stratum) as n_in_stratum

    from stratified

),

split as (

    select
        task,
        item_id,
        gold_label,
        num_disagr,
        stratum,
        case
            when rank_in_stratum <= round(n_in_stratum * {{ var('annotation_dev_share') }}) then 'dev'
            else 'test'
        end as split

    from ranked

)

select * from split
