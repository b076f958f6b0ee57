-- Meta rules (paper §6, Table 5): mask the common part X — a content lemma occurring in both the
-- premise and the hypothesis path — and count how many rules share the masked pattern.
-- "nsubj^-___agree___xcomp___buy___dobj ⇒ nsubj^-___buy___dobj" becomes
-- "nsubj^-___agree___xcomp___X___dobj ⇒ nsubj^-___X___dobj". A pair with several common lemmas
-- yields one masking per lemma.

with

pairs as (

    select * from {{ ref('int_meta_rule_path_pairs') }}

),

lemmas as (

    select * from {{ ref('int_meta_rule_lemmas') }}

),

common as (

    select distinct
        p.premise_path,
        p.hypothesis_path,
        p.alignment,
        p.lemma as filler

    from lemmas as p
    inner join lemmas as h
        on p.premise_path = h.premise_path
        and p.hypothesis_path = h.hypothesis_path
        and p.alignment = h.alignment
        and h.side = 'hypothesis'
        and p.lemma = h.lemma
    where p.side = 'premise'

),

replaced as (

    -- replace the lemma as a whole element: pad with the separator, replace, strip the padding
    select
        common.premise_path,
        common.hypothesis_path,
        common.alignment,
        common.filler,
        pairs.n_infcands,
        replace('___' || common.premise_path || '___', '___' || common.filler || '___', '___X___') as padded_premise,
        replace('___' || common.hypothesis_path || '___', '___' || common.filler || '___', '___X___')
            as padded_hypothesis

    from common
    inner join pairs
        on common.premise_path = pairs.premise_path
        and common.hypothesis_path = pairs.hypothesis_path
        and common.alignment = pairs.alignment

),

masked as (

    select
        premise_path,
        hypothesis_path,
        alignment,
        filler,
        n_infcands,
        substr(padded_premise, 4, length(padded_premise) - 6) as premise_pattern,
        substr(padded_hypothesis, 4, length(padded_hypothesis) - 6) as hypothesis_pattern

    from replaced

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

    from masked
    group by premise_pattern, hypothesis_pattern, alignment

)

select * from counted
