-- Implicative verbs found among the InfCands (paper §6): "A V-s to X B ⇒ A X-s B",
-- e.g. nsubj^-___agree___xcomp___X___dobj ⇒ nsubj^-___X___dobj, one row per verb V.
select
    verb,
    n_fillers,
    n_rules,
    n_meta_rules,
    n_infcands,
    example_meta_rule
from warehouse.meta_rules_implicative
order by n_fillers desc, n_rules desc, verb asc;
