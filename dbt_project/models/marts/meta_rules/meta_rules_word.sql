-- Meta rules (paper §6, Table 5): mask the common part X — a content lemma occurring in both the
-- premise and the hypothesis path — and count how many rules share the masked pattern.
-- "nsubj^-___agree___xcomp___buy___dobj ⇒ nsubj^-___buy___dobj" becomes
-- "nsubj^-___agree___xcomp___X___dobj ⇒ nsubj^-___X___dobj" (the maskings: int_meta_rule_maskings).

with

maskings as (

    select * from {{ ref('int_meta_rule_maskings') }}
    where masking = 'word'

),

counted as (

    select
        premise_pattern,
        hypothesis_pattern,
        alignment,
        count(*) as n_rules,
        count(distinct filler) as n_fillers,
        cast(sum(n_infcands) as {{ dbt.type_bigint() }}) as n_infcands,
        min(filler) as example_filler,
        max(filler) as other_example_filler

    from maskings
    group by premise_pattern, hypothesis_pattern, alignment

)

select * from counted
