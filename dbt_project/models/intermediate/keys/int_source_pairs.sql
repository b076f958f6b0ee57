{{ config(materialized='view') }}
-- The instances this build adds counted per (path, arg1, arg2) on their text ids: the two halves,
-- counted side by side (macros/source_pairs.sql). The keys models count paths and entities from these
-- pairs and int_relation_pairs keys them, so the 5M-row instance table is grouped once.
with

half_1 as (

    select * from {{ ref('int_source_pairs_half_1') }}

),

half_2 as (

    select * from {{ ref('int_source_pairs_half_2') }}

),

source_pairs as (

    select * from half_1
    union all
    select * from half_2

)

select * from source_pairs
