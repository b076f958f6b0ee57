-- Worker trust (agreement with the majority); workers below 0.8 are excluded from the gold labels.
select
    task,
    worker_id,
    n_judgements,
    n_compared,
    n_agree,
    round(cast(trust as numeric), 3) as trust,
    is_trusted
from warehouse.annotation_worker_trust
order by is_trusted, trust nulls last, worker_id;
