{{ config(post_hook="{{ analyze_table() }}") }}
with

top_n as (

    select * from {{ ref('int_candidates_ranked') }}

),

-- one import CTE per use (int_candidate_scores says why: a materialised CTE keeps the plan in one process)
premise_relations as (

    select * from {{ ref('typed_relations') }}

),

hypothesis_relations as (

    select * from {{ ref('typed_relations') }}

),

final as (

    select
        top_n.premise_typed_rel_id,
        top_n.hypothesis_typed_rel_id,
        top_n.alignment,
        top_n.premise_size,
        top_n.hypothesis_size,
        top_n.overlap_size,
        top_n.n_overlap_arg1,
        top_n.n_overlap_arg2,
        top_n.n_overlap_entities,
        top_n.relv,
        top_n.sigma,
        top_n.esr,
        top_n.score,
        top_n.rank_for_hypothesis,
        top_n.premise_rel_id,
        top_n.hypothesis_rel_id,
        premise.path as premise_path,
        hypothesis.path as hypothesis_path,
        premise.type_a as premise_type_a,
        premise.type_b as premise_type_b,
        hypothesis.type_a as hypothesis_type_a,
        hypothesis.type_b as hypothesis_type_b,
        premise.tsg_index as premise_tsg_index,
        hypothesis.tsg_index as hypothesis_tsg_index,
        premise.tsg_a as premise_tsg_a,
        premise.tsg_b as premise_tsg_b,
        hypothesis.tsg_a as hypothesis_tsg_a,
        hypothesis.tsg_b as hypothesis_tsg_b,
        top_n.n_entities,
        premise.typed_relation_key as premise_key,
        hypothesis.typed_relation_key as hypothesis_key,
        {{ surrogate_key(['premise.typed_relation_key', 'hypothesis.typed_relation_key', 'top_n.alignment']) }}
            as candidate_key

    from top_n
    inner join premise_relations as premise
        on top_n.premise_typed_rel_id = premise.typed_rel_id
    inner join hypothesis_relations as hypothesis
        on top_n.hypothesis_typed_rel_id = hypothesis.typed_rel_id

)

select * from final
