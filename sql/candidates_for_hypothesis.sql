-- Inference candidates (premises) of a hypothesis relation, for every typing of it, best first.
--
-- Usage: .venv/bin/sherliic-db psql -v hypothesis='nsubj^-___buy___dobj' -f sql/candidates_for_hypothesis.sql
-- Variables: hypothesis = canonical path of the hypothesis (default: the path with most candidates),
--   limit = max rows (default 100).
\if :{?limit}
\else
\set limit 100
\endif
\if :{?hypothesis}
\else
select hypothesis_path as hypothesis
from warehouse.inference_candidates
group by hypothesis_path
order by count(*) desc, hypothesis_path asc
limit 1
\gset
\endif

select
    hypothesis_type_a || '[A] / ' || hypothesis_type_b || '[B]' as hypothesis_typing,
    rank_for_hypothesis as rank,
    premise_path,
    premise_type_a || '[A] / ' || premise_type_b || '[B]' as premise_typing,
    alignment,
    overlap_size,
    round(cast(relv as numeric), 2) as relv,
    round(cast(sigma as numeric), 3) as sigma,
    round(cast(esr as numeric), 3) as esr,
    round(cast(score as numeric), 2) as score
from warehouse.inference_candidates
where hypothesis_path = :'hypothesis'
order by hypothesis_tsg_index, rank_for_hypothesis
limit :limit;
