-- Where the build's candidates went: one row per step from relation instances to InfCands, with what
-- is left after it and the dbt var that controls it (the order of docs/design.md §5). The threshold
-- steps are cumulative over the typed relation pairs (each keeps the pairs passing it and every
-- earlier one), so the first step with 0 rows is the one that removed the last candidates;
-- `sherliic-dbt` names it, and its var, when a build yields no candidate.
with

relation_instances as (

    select * from {{ ref('int_relation_instances') }}

),

relations as (

    select * from {{ ref('relations') }}

),

typed_relations as (

    select * from {{ ref('typed_relations') }}

),

candidate_scores as (

    select * from {{ ref('int_candidate_scores') }}

),

candidates as (

    select * from {{ ref('inference_candidates') }}

),

pair_counts as (

    select
        count(*) as n_pairs,
        sum(case when passes_types then 1 else 0 end) as n_types,
        sum(case when passes_types and passes_relv then 1 else 0 end) as n_relv,
        sum(case when passes_types and passes_relv and passes_sigma then 1 else 0 end) as n_sigma,
        sum(case when passes_types and passes_relv and passes_sigma and passes_esr then 1 else 0 end)
            as n_esr

    from candidate_scores
    where
        passes_overlap
        and passes_projections
        and premise_rel_id <> hypothesis_rel_id

),

steps as (

    select
        1 as step_number,
        'relation_instances' as step,
        'relation instances of the selected corpora' as counted,
        (select count(*) from relation_instances) as n_rows,
        'corpora' as var_name
    union all
    select
        2,
        'relations',
        'relations (distinct dependency paths)',
        (select count(*) from relations),
        'corpora'
    union all
    select
        3,
        'relations_min_size',
        'relations with at least r_min entity pairs',
        (select count(*) from relations where n_entity_pairs >= {{ var('r_min') }}),
        'r_min'
    union all
    select
        4,
        'typed_relations',
        'typed relations with at least r_min entity pairs',
        (select count(*) from typed_relations),
        'r_min'
    union all
    select
        5,
        'typed_pairs',
        'typed relation pairs of different paths with |A∩B|, |π1(A∩B)|, |π2(A∩B)| at least r_min',
        n_pairs,
        'r_min'
    from pair_counts
    union all
    select
        6,
        'types',
        'pairs whose aligned type signatures are compatible',
        n_types,
        'type_sources'
    from pair_counts
    union all
    select
        7,
        'relv',
        'pairs with Relv at least min_relv as well',
        n_relv,
        'min_relv'
    from pair_counts
    union all
    select
        8,
        'sigma',
        'pairs with σ at least min_sigma as well',
        n_sigma,
        'min_sigma'
    from pair_counts
    union all
    select
        9,
        'esr',
        'pairs with esr at least min_esr as well (all six criteria)',
        n_esr,
        'min_esr'
    from pair_counts
    union all
    select
        10,
        'inference_candidates',
        'InfCands: the best top_n_premises premises of each hypothesis',
        (select count(*) from candidates),
        'top_n_premises'

),

final as (

    select
        cast(step_number as integer) as step_number,
        step,
        counted,
        cast(coalesce(n_rows, 0) as bigint) as n_rows,
        var_name,
        case var_name
            {%- for name in ['corpora', 'r_min', 'type_sources', 'min_relv', 'min_sigma', 'min_esr', 'top_n_premises'] %}
            when {{ sql_string_literal(name) }} then {{ sql_string_literal(tojson(var(name))) }}
            {%- endfor %}
        end as var_value

    from steps

)

select * from final
