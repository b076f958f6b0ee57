-- the scores of the build being built: 'default' for schema warehouse, else the named build's
with

source as (

    select * from {{ source('results', 'verifier_scores') }}

),

renamed as (

    select
        candidate_key,
        verifier_key,
        backend,
        verifier_score,
        premise_sentence,
        hypothesis_sentence

    from source
    where build = {{ sql_string_literal(build_name()) }}

)

select * from renamed
