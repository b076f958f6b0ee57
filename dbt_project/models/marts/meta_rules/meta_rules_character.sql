-- Character-level meta rules (paper §6): the common part X is part of a lemma, a stem the premise and
-- the hypothesis lemma share as prefix (lead / leader -> X / Xer) or suffix (take / retake -> X / reX);
-- the lemmas are replaced by their masked forms (int_meta_rule_maskings) and the patterns counted like
-- meta_rules_word.

with

maskings as (

    select * from {{ ref('int_meta_rule_maskings') }}
    where masking in ('prefix', 'suffix')

),

counted as (

    select
        premise_pattern,
        hypothesis_pattern,
        alignment,
        masking as stem_position,
        count(*) as n_rules,
        count(distinct filler) as n_fillers,
        cast(sum(n_infcands) as {{ dbt.type_bigint() }}) as n_infcands,
        min(premise_lemma || ' => ' || hypothesis_lemma) as example_lemmas

    from maskings
    group by premise_pattern, hypothesis_pattern, alignment, masking

)

select * from counted
