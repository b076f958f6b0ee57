with

source as (

    select * from {{ source('results', 'verifiers') }}

),

renamed as (

    select
        verifier_key,
        verifier_name

    from source

)

select * from renamed
