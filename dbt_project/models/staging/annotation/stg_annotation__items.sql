with

source as (

    select * from {{ source('annotation', 'annotation_items') }}

),

renamed as (

    select
        item_id,
        batch_name,
        premise_group_id,
        stratum,
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        premise_rel_id,
        hypothesis_rel_id,
        premise_tsg_index,
        hypothesis_tsg_index,
        alignment,
        premise_path,
        hypothesis_path,
        premise_type_a,
        premise_type_b,
        hypothesis_type_a,
        hypothesis_type_b,
        prem_argleft,
        prem_middle,
        prem_argright,
        prem_end,
        hypo_argleft,
        hypo_middle,
        hypo_argright,
        hypo_end,
        premise_text,
        hypothesis_text,
        examples_a,
        examples_b,
        relv,
        sigma,
        esr,
        score

    from source

)

select * from renamed
