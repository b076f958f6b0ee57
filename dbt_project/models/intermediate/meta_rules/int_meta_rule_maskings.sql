-- Every masking of the path pairs behind the InfCands (paper §6): X, the common part of a premise lemma
-- p and a hypothesis lemma h, is masked in both paths, which gives the pair's patterns. Three kinds:
--   word:   p = h = X, masked as X on both sides (meta_rules_word);
--   prefix: p = X·s, h = X·t with |s|, |t| ≤ 3 (agent nouns: lead / leader -> X / Xer);
--   suffix: p = s·X, h = t·X with |s|, |t| ≤ 4 (prefixes: take / retake -> X / reX)
-- (meta_rules_character), X at least 3 characters there, the longest such X per lemma pair. A pair
-- with several common lemmas yields one masking per lemma.

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
        and (
            p.lemma = h.lemma
            -- cheap pre-filter of a shared stem: a shared 3-character start or end, lengths within the
            -- affix limits
            or (
                abs(length(p.lemma) - length(h.lemma)) <= 4
                and (
                    substr(p.lemma, 1, 3) = substr(h.lemma, 1, 3)
                    or substr(p.lemma, length(p.lemma) - 2, 3) = substr(h.lemma, length(h.lemma) - 2, 3)
                )
            )
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
        max(stem_lengths.k) as k

    from lemma_pairs
    cross join stem_lengths
    where lemma_pairs.premise_lemma <> lemma_pairs.hypothesis_lemma
        and stem_lengths.k <= length(lemma_pairs.premise_lemma)
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
        max(stem_lengths.k) as k

    from lemma_pairs
    cross join stem_lengths
    where lemma_pairs.premise_lemma <> lemma_pairs.hypothesis_lemma
        and stem_lengths.k <= length(lemma_pairs.premise_lemma)
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

-- X (the filler) and the masked forms of both lemmas
maskings as (

    select
        premise_path,
        hypothesis_path,
        alignment,
        'word' as masking,
        premise_lemma,
        hypothesis_lemma,
        premise_lemma as filler,
        'X' as premise_mask,
        'X' as hypothesis_mask

    from lemma_pairs
    where premise_lemma = hypothesis_lemma

    union all

    select
        premise_path,
        hypothesis_path,
        alignment,
        'prefix' as masking,
        premise_lemma,
        hypothesis_lemma,
        substr(premise_lemma, 1, k) as filler,
        'X' || substr(premise_lemma, k + 1, length(premise_lemma)) as premise_mask,
        'X' || substr(hypothesis_lemma, k + 1, length(hypothesis_lemma)) as hypothesis_mask

    from prefix_stems

    union all

    select
        premise_path,
        hypothesis_path,
        alignment,
        'suffix' as masking,
        premise_lemma,
        hypothesis_lemma,
        substr(premise_lemma, length(premise_lemma) - k + 1, k) as filler,
        substr(premise_lemma, 1, length(premise_lemma) - k) || 'X' as premise_mask,
        substr(hypothesis_lemma, 1, length(hypothesis_lemma) - k) || 'X' as hypothesis_mask

    from suffix_stems

),

-- the lemma replaced as a whole path element: padded with the separator, replaced, the padding stripped
replaced as (

    select
        maskings.*,
        pairs.n_infcands,
        replace(
            '___' || maskings.premise_path || '___', '___' || maskings.premise_lemma || '___',
            '___' || maskings.premise_mask || '___'
        ) as padded_premise,
        replace(
            '___' || maskings.hypothesis_path || '___', '___' || maskings.hypothesis_lemma || '___',
            '___' || maskings.hypothesis_mask || '___'
        ) as padded_hypothesis

    from maskings
    inner join pairs
        on maskings.premise_path = pairs.premise_path
        and maskings.hypothesis_path = pairs.hypothesis_path
        and maskings.alignment = pairs.alignment

),

final as (

    select
        premise_path,
        hypothesis_path,
        alignment,
        masking,
        premise_lemma,
        hypothesis_lemma,
        filler,
        n_infcands,
        substr(padded_premise, 4, length(padded_premise) - 6) as premise_pattern,
        substr(padded_hypothesis, 4, length(padded_hypothesis) - 6) as hypothesis_pattern

    from replaced

)

select * from final
