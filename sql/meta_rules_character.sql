-- Top character-level meta rules (paper §6): X is part of a lemma, e.g. agent nouns
-- (A is Xer of B ⇒ A X B: leader/lead, founder/found) and re-/over- prefixes (A reX B ⇒ A X B).
select
    premise_pattern,
    hypothesis_pattern,
    alignment,
    stem_position,
    n_fillers,
    n_rules,
    n_infcands,
    example_lemmas
from warehouse.meta_rules_character
order by n_fillers desc, n_rules desc, premise_pattern asc, hypothesis_pattern asc
limit 25;
