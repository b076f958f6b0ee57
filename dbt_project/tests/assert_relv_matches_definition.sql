-- Relv = |A∩B|·|E|²/(|A|·|B|) and esr = |π1 ∪ π2|/(2|A∩B|), recomputed from the marts (relative 1e-9);
-- |E| must be the number of rows of the entities mart.
with

candidates as (

    select * from {{ ref('inference_candidates') }}

),

graph as (

    select cast(count(*) as {{ type_double() }}) as n_entities
    from {{ ref('entities') }}

),

recomputed as (

    select
        candidates.*,
        candidates.overlap_size * graph.n_entities * graph.n_entities
        / (cast(candidates.premise_size as {{ type_double() }}) * candidates.hypothesis_size) as expected_relv,
        cast(candidates.n_overlap_entities as {{ type_double() }}) / (2 * candidates.overlap_size)
            as expected_esr,
        graph.n_entities as expected_n_entities

    from candidates
    cross join graph

)

select * from recomputed
where abs(relv - expected_relv) > 1e-9 * expected_relv
    or abs(esr - expected_esr) > 1e-9
    or abs(score - relv * sigma * esr) > 1e-9 * abs(relv * sigma * esr)
    or n_entities <> expected_n_entities
