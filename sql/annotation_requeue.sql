-- Items that need more judgements (too few trusted yes/no answers, e.g. after excluding workers
-- with trust < 0.8, or a tied vote), with what the annotators saw.
select
    labels.task,
    labels.item_id,
    labels.n_missing,
    labels.n_valid_judgements,
    labels.n_excluded_judgements,
    items.premise_text,
    items.hypothesis_text
from warehouse.annotation_item_labels as labels
inner join raw.annotation_items as items on labels.item_id = items.item_id
where labels.status = 'requeue'
order by labels.n_missing desc, labels.item_id asc;
