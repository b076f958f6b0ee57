-- Top word-level meta rules (paper §6, Table 5): InfCand path pairs with their common content
-- lemma X masked, ranked by the number of distinct fillers X (how productive the pattern is).
-- Run after `make dbt-run` (dbt tag:meta_rules): `make psql < sql/meta_rules_top.sql`.
select
    premise_pattern,
    hypothesis_pattern,
    alignment,
    n_fillers,
    n_rules,
    n_infcands,
    example_filler,
    other_example_filler
from warehouse.meta_rules_word
order by n_fillers desc, n_rules desc, premise_pattern asc, hypothesis_pattern asc
limit 25;
