{% macro source_pairs_half(half) %}
    {#- The body of int_source_pairs_half_<half> (half 1 or 2; int_source_pairs is the union of the two):
        the instances this build adds (the batches after previous_max_batch_id(): every batch in a full
        build, the new ones in an incremental one) counted per (path, arg1, arg2) on their text ids, for
        the pairs whose first argument's last character has an even (half 1) or odd (half 2) code. The
        two halves are separate models so that dbt runs them side by side: the build starts with this
        step alone, and one grouping of 5M instances ran on one core (7-10 s) while the other core had
        nothing to do. A pair is in exactly one half (arg1 is part of its key), so the union needs no
        grouping. The halves are the same on every engine (ascii and right are in Postgres and Spark
        SQL); they are near equal for ids that end in a digit or a letter, and only the speed depends
        on it. -#}
    with

    instances as (

        select * from {{ ref('int_loaded_relation_instances') }}
        where ascii(right(arg1_entity_id, 1)) % 2 = {{ half - 1 }}
            and batch_id > {{ previous_max_batch_id() }}

    ),

    source_pairs as (

        select
            path,
            arg1_entity_id,
            arg2_entity_id,
            -- an integer: sums of integers aggregate in a bigint, sums of bigints in numeric (slower)
            cast(count(*) as integer) as n_instances,
            min(batch_id) as first_batch_id

        from instances
        group by
            path,
            arg1_entity_id,
            arg2_entity_id

    )

    select * from source_pairs
{% endmacro %}
