-- The content lemmas of both paths of each path pair, with their 1-based element position.
-- Lemmas sit at even positions (2, 4, ..., 14: at most 7 words); a lemma right after a `prep`
-- label is a preposition and never the masked part X.

with

pairs as (

    select * from {{ ref('int_meta_rule_path_pairs') }}

),

positions as (

    {% for pos in range(2, 16, 2) %}
    {% if not loop.first %}union all{% endif %}
    select {{ pos }} as pos
    {% endfor %}

),

premise_lemmas as (

    select
        pairs.premise_path,
        pairs.hypothesis_path,
        pairs.alignment,
        'premise' as side,
        positions.pos,
        {{ path_element('pairs.premise_path', 'positions.pos') }} as lemma,
        {{ strip_up_marker(path_element('pairs.premise_path', 'positions.pos - 1')) }} as label_before

    from pairs
    cross join positions

),

hypothesis_lemmas as (

    select
        pairs.premise_path,
        pairs.hypothesis_path,
        pairs.alignment,
        'hypothesis' as side,
        positions.pos,
        {{ path_element('pairs.hypothesis_path', 'positions.pos') }} as lemma,
        {{ strip_up_marker(path_element('pairs.hypothesis_path', 'positions.pos - 1')) }} as label_before

    from pairs
    cross join positions

),

unioned as (

    select * from premise_lemmas
    union all
    select * from hypothesis_lemmas

),

content as (

    select
        premise_path,
        hypothesis_path,
        alignment,
        side,
        pos,
        lemma

    from unioned
    where coalesce(lemma, '') <> '' and label_before <> 'prep'

)

select * from content
