-- Where the build's candidates went: one row per step from relation instances to InfCands, with what
-- is left after it and the dbt var that controls it (the order of docs/design.md §5). The threshold
-- steps are cumulative over the typed relation pairs (each keeps the pairs passing it and every
-- earlier one), so the first step with 0 rows is the one that removed the last candidates;
-- `sherliic-dbt` names it, and its var, when a build yields no candidate.
with

-- the keyed instances, counted per entity pair (the graph keeps no table of single instances)
relation_pairs as (

    select * from {{ ref('int_relation_pairs') }}

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

instance_counts as (

    select sum(n_instances) as n_instances
    from relation_pairs

),

relation_counts as (

    select
        count(*) as n_relations,
        sum(case when n_entity_pairs >= {{ var('r_min') }} then 1 else 0 end) as n_relations_min_size,
        max(n_entity_pairs) as max_relation_size

    from relations

),

typed_relation_counts as (

    select count(*) as n_typed_relations
    from typed_relations

),

-- the typed pairs and, cumulatively, those passing each further criterion
pair_counts as (

    select
        count(*) as n_pairs,
        sum(case when passes_types then 1 else 0 end) as n_types,
        sum(case when passes_types and passes_relv then 1 else 0 end) as n_relv,
        sum(case when passes_types and passes_relv and passes_sigma then 1 else 0 end) as n_sigma,
        sum(case when passes_types and passes_relv and passes_sigma and passes_esr then 1 else 0 end)
            as n_esr,
        -- the largest score among the pairs reaching each threshold: a threshold at most this lets some pass
        max(case when passes_types then relv end) as max_relv,
        max(case when passes_types and passes_relv then sigma end) as max_sigma,
        max(case when passes_types and passes_relv and passes_sigma then esr end) as max_esr

    from candidate_scores
    where
        passes_overlap
        and passes_projections
        and premise_rel_id <> hypothesis_rel_id

),

candidate_counts as (

    select count(*) as n_candidates
    from candidates

),

counts as (

    select
        instance_counts.n_instances,
        relation_counts.n_relations,
        relation_counts.n_relations_min_size,
        relation_counts.max_relation_size,
        typed_relation_counts.n_typed_relations,
        pair_counts.n_pairs,
        pair_counts.n_types,
        pair_counts.n_relv,
        pair_counts.n_sigma,
        pair_counts.n_esr,
        pair_counts.max_relv,
        pair_counts.max_sigma,
        pair_counts.max_esr,
        candidate_counts.n_candidates

    from instance_counts
    cross join relation_counts
    cross join typed_relation_counts
    cross join pair_counts
    cross join candidate_counts

),

steps as (

    select
        1 as step_number,
        'relation_instances' as step,
        'relation instances of the selected corpora' as counted,
        n_instances as n_rows,
        'corpora' as var_name,
        cast(null as {{ type_double() }}) as passing_value
    from counts
    union all
    select
        2 as step_number,
        'relations' as step,
        'relations (distinct dependency paths)' as counted,
        n_relations as n_rows,
        'corpora' as var_name,
        cast(null as {{ type_double() }}) as passing_value
    from counts
    union all
    select
        3 as step_number,
        'relations_min_size' as step,
        'relations with at least r_min entity pairs' as counted,
        n_relations_min_size as n_rows,
        'r_min' as var_name,
        cast(max_relation_size as {{ type_double() }}) as passing_value
    from counts
    union all
    select
        4 as step_number,
        'typed_relations' as step,
        'typed relations with at least r_min entity pairs' as counted,
        n_typed_relations as n_rows,
        'r_min' as var_name,
        cast(null as {{ type_double() }}) as passing_value
    from counts
    union all
    select
        5 as step_number,
        'typed_pairs' as step,
        'typed relation pairs of different paths with |A∩B|, |π1(A∩B)|, |π2(A∩B)| at least r_min' as counted,
        n_pairs as n_rows,
        'r_min' as var_name,
        cast(null as {{ type_double() }}) as passing_value
    from counts
    union all
    select
        6 as step_number,
        'types' as step,
        'pairs whose aligned type signatures are compatible' as counted,
        n_types as n_rows,
        'type_sources' as var_name,
        cast(null as {{ type_double() }}) as passing_value
    from counts
    union all
    select
        7 as step_number,
        'relv' as step,
        'pairs with Relv at least min_relv as well' as counted,
        n_relv as n_rows,
        'min_relv' as var_name,
        cast(floor(max_relv * 100) / 100 as {{ type_double() }}) as passing_value
    from counts
    union all
    select
        8 as step_number,
        'sigma' as step,
        'pairs with σ at least min_sigma as well' as counted,
        n_sigma as n_rows,
        'min_sigma' as var_name,
        cast(floor(max_sigma * 100) / 100 as {{ type_double() }}) as passing_value
    from counts
    union all
    select
        9 as step_number,
        'esr' as step,
        'pairs with esr at least min_esr as well (all six criteria)' as counted,
        n_esr as n_rows,
        'min_esr' as var_name,
        cast(floor(max_esr * 100) / 100 as {{ type_double() }}) as passing_value
    from counts
    union all
    select
        10 as step_number,
        'inference_candidates' as step,
        'InfCands: the best top_n_premises premises of each hypothesis' as counted,
        n_candidates as n_rows,
        'top_n_premises' as var_name,
        cast(null as {{ type_double() }}) as passing_value
    from counts

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
        end as var_value,
        -- the var's value at which the step would keep rows (r_min: the largest relation; thresholds:
        -- the largest score reaching them, rounded down); null where no single value says it
        passing_value

    from steps

)

select * from final
