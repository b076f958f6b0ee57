{{ config(
    pre_hook=["{{ heavy_model_settings() }}", "{{ serial_plan() }}"],
    post_hook="{{ analyze_table() }}",
) }}
-- The pairs of int_source_pairs whose first argument's id ends in a character of even code (the SQL,
-- and why the pairs are counted in two halves: macros/source_pairs.sql).
-- One process although a grouping this size could use workers: most pairs occur once, so parallel
-- workers' partial groups hardly merge (5M instances → 2.95M partial groups → 2.6M pairs) and the leader
-- grouped them all again alone (at 5M, three builds each: 7.3-9.6 s serial, 8.3-10.2 s with two workers
-- and 40 % more CPU); and the other half runs beside it.
{{ source_pairs_half(1) }}
