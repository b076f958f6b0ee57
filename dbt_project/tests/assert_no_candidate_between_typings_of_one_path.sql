-- No InfCand pairs two typings of the same path (the paper drops premises with the hypothesis' path).
select *
from {{ ref('inference_candidates') }}
where premise_rel_id = hypothesis_rel_id
    or premise_path = hypothesis_path
