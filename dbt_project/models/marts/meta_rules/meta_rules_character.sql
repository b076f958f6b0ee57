-- Character-level meta rules (paper §6): the common part X is part of a lemma. A premise lemma p
-- and a hypothesis lemma h share X as
--   prefix: p = X·s, h = X·t with |s|, |t| ≤ 3  (agent nouns: lead / leader -> X / Xer), or
--   suffix: p = s·X, h = t·X with |s|, |t| ≤ 4  (prefixes: take / retake, take / overtake -> X / reX),
-- X at least 3 characters, the longest such X per lemma pair. The lemmas are replaced by their
-- masked forms (Xer, reX, ...) and the patterns counted like meta_rules_word.

with

pairs as (

    select * from {{ ref('int_meta_rule_path_pairs') }}

),

lemmas as (

    select * from {{ ref('int_meta_rule_lemmas') }}

),

lemma_pairs as (

    select distinct
        p.premise_path,
        p.hypothesis_path,
        p.alignment,
        p.lemma as premise_lemma,
        h.lemma as hypothesis_lemma

    from lemmas as p
    inner join lemmas as h
        on p.premise_path = h.premise_path
        and p.hypothesis_path = h.hypothesis_path
        and p.alignment = h.alignment
        and h.side = 'hypothesis'
    where p.side = 'premise'
        and p.lemma <> h.lemma
        -- cheap pre-filter: a shared 3-character start or end, lengths within the affix limits
        and abs(length(p.lemma) - length(h.lemma)) <= 4
        and (
            substr(p.lemma, 1, 3) = substr(h.lemma, 1, 3)
            or substr(p.lemma, length(p.lemma) - 2, 3) = substr(h.lemma, length(h.lemma) - 2, 3)
        )

),

stem_lengths as (

    {% for k in range(3, 21) %}
    {% if not loop.first %}union all{% endif %}
    select {{ k }} as k
    {% endfor %}

),

prefix_stems as (

    select
        lemma_pairs.*,
        'prefix' as stem_position,
        max(stem_lengths.k) as k

    from lemma_pairs
    cross join stem_lengths
    where stem_lengths.k <= length(lemma_pairs.premise_lemma)
        and stem_lengths.k <= length(lemma_pairs.hypothesis_lemma)
        and substr(lemma_pairs.premise_lemma, 1, stem_lengths.k) = substr(lemma_pairs.hypothesis_lemma, 1, stem_lengths.k)
        and length(lemma_pairs.premise_lemma) - stem_lengths.k <= 3
        and length(lemma_pairs.hypothesis_lemma) - stem_lengths.k <= 3
    group by
        lemma_pairs.premise_path,
        lemma_pairs.hypothesis_path,
        lemma_pairs.alignment,
        lemma_pairs.premise_lemma,
        lemma_pairs.hypothesis_lemma

),

suffix_stems as (

    select
        lemma_pairs.*,
        'suffix' as stem_position,
        max(stem_lengths.k) as k

    from lemma_pairs
    cross join stem_lengths
    where stem_lengths.k <= length(lemma_pairs.premise_lemma)
        and stem_lengths.k <= length(lemma_pairs.hypothesis_lemma)
        and substr(lemma_pairs.premise_lemma, length(lemma_pairs.premise_lemma) - stem_lengths.k + 1, stem_lengths.k)
        = substr(lemma_pairs.hypothesis_lemma, length(lemma_pairs.hypothesis_lemma) - stem_lengths.k + 1, stem_lengths.k)
        and length(lemma_pairs.premise_lemma) - stem_lengths.k <= 4
        and length(lemma_pairs.hypothesis_lemma) - stem_lengths.k <= 4
    group by
        lemma_pairs.premise_path,
        lemma_pairs.hypothesis_path,
        lemma_pairs.alignment,
        lemma_pairs.premise_lemma,
        lemma_pairs.hypothesis_lemma

),

stems as (

    select
        *,
        substr(premise_lemma, 1, k) as stem,
        'X' || substr(premise_lemma, k + 1, length(premise_lemma)) as premise_mask,
        'X' || substr(hypothesis_lemma, k + 1, length(hypothesis_lemma)) as hypothesis_mask

    from prefix_stems
    union all
    select
        *,
        substr(premise_lemma, length(premise_lemma) - k + 1, k) as stem,
        substr(premise_lemma, 1, length(premise_lemma) - k) || 'X' as premise_mask,
        substr(hypothesis_lemma, 1, length(hypothesis_lemma) - k) || 'X' as hypothesis_mask

    from suffix_stems

),

replaced as (

    select
        stems.premise_path,
        stems.hypothesis_path,
        stems.alignment,
        stems.stem_position,
        stems.stem,
        stems.premise_lemma,
        stems.hypothesis_lemma,
        pairs.n_infcands,
        replace(
            '___' || stems.premise_path || '___', '___' || stems.premise_lemma || '___',
            '___' || stems.premise_mask || '___'
        ) as padded_premise,
        replace(
            '___' || stems.hypothesis_path || '___', '___' || stems.hypothesis_lemma || '___',
            '___' || stems.hypothesis_mask || '___'
        ) as padded_hypothesis

    from stems
    inner join pairs
        on stems.premise_path = pairs.premise_path
        and stems.hypothesis_path = pairs.hypothesis_path
        and stems.alignment = pairs.alignment

),

masked as (

    select
        *,
        substr(padded_premise, 4, length(padded_premise) - 6) as premise_pattern,
        substr(padded_hypothesis, 4, length(padded_hypothesis) - 6) as hypothesis_pattern

    from replaced

),

counted as (

    select
        premise_pattern,
        hypothesis_pattern,
        alignment,
        stem_position,
        count(*) as n_rules,
        count(distinct stem) as n_fillers,
        cast(sum(n_infcands) as {{ dbt.type_bigint() }}) as n_infcands,
        min(premise_lemma || ' => ' || hypothesis_lemma) as example_lemmas

    from masked
    group by premise_pattern, hypothesis_pattern, alignment, stem_position

)

select * from counted
