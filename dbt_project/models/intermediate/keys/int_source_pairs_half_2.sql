{{ config(
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
-- The pairs of int_source_pairs whose first argument's id ends in a character of odd code (the SQL,
-- and why the pairs are counted in two halves: macros/source_pairs.sql; why in one process each:
-- int_source_pairs_half_1).
{{ source_pairs_half(2) }}
