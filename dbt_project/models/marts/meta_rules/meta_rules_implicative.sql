-- Implicative-verb patterns (paper §6): word-level meta rules of the form
-- "… V xcomp X … ⇒ … X …", e.g. nsubj^-___agree___xcomp___X___dobj ⇒ nsubj^-___X___dobj
-- ("A agrees to X B ⇒ A X B"): the hypothesis pattern is the premise pattern with "V___xcomp___"
-- removed before X. One row per verb V with the counts summed over its meta rules.

with

meta_rules as (

    select * from {{ ref('meta_rules_word') }}

),

positions as (

    {% for pos in range(2, 14, 2) %}
    {% if not loop.first %}union all{% endif %}
    select {{ pos }} as pos
    {% endfor %}

),

candidates as (

    select
        meta_rules.*,
        {{ path_element('meta_rules.premise_pattern', 'positions.pos') }} as verb

    from meta_rules
    cross join positions
    where {{ path_element('meta_rules.premise_pattern', 'positions.pos + 1') }} = 'xcomp'
        and {{ path_element('meta_rules.premise_pattern', 'positions.pos + 2') }} = 'X'

),

implicative as (

    select *
    from candidates
    where replace('___' || premise_pattern || '___', '___' || verb || '___xcomp___X___', '___X___')
        = '___' || hypothesis_pattern || '___'

),

per_verb as (

    select
        verb,
        count(*) as n_meta_rules,
        cast(sum(n_rules) as {{ dbt.type_bigint() }}) as n_rules,
        cast(sum(n_fillers) as {{ dbt.type_bigint() }}) as n_fillers,
        cast(sum(n_infcands) as {{ dbt.type_bigint() }}) as n_infcands,
        min(premise_pattern || ' => ' || hypothesis_pattern) as example_meta_rule

    from implicative
    group by verb

)

select * from per_verb
