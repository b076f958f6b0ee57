-- Items with the task of their batch (the key columns the aggregation needs).

with

items as (

    select * from {{ ref('stg_annotation__items') }}

),

batches as (

    select * from {{ ref('stg_annotation__batches') }}

),

joined as (

    select
        batches.task,
        items.item_id,
        items.batch_name,
        items.premise_group_id,
        items.stratum

    from items
    inner join batches on items.batch_name = batches.batch_name

)

select * from joined
