{{ config(
    materialized=incremental_materialization(),
    unique_key=['low_entity_id', 'high_entity_id'],
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- The unordered entity pairs {x, y} that two relations or more have, in either orientation: the only
-- pairs that can be in the overlap of two relations (int_relation_overlaps, step 1). Counted over every
-- relation pair, not only those of typed relations, so that this model needs int_relation_pairs alone
-- and runs beside the slot typing models instead of on the build's critical path; the extra keys only
-- let through pairs that find no partner there, so the overlaps are the same.
-- Incremental: a pair stays shared once it is (batches are only added), and a pair becomes shared
-- only through a pair new to the graph: the new pairs' keys are counted over the whole graph.
with

{% if is_incremental() %}
new_keys as (

    select distinct
        least(arg1_entity_id, arg2_entity_id) as low_entity_id,
        greatest(arg1_entity_id, arg2_entity_id) as high_entity_id

    from {{ changed_rows(ref('int_relation_pairs')) }}
    where first_batch_id > {{ previous_max_batch_id() }}

),

graph_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),

relation_pairs as (

    select graph_pairs.*
    from graph_pairs
    inner join new_keys
        on least(graph_pairs.arg1_entity_id, graph_pairs.arg2_entity_id) = new_keys.low_entity_id
        and greatest(graph_pairs.arg1_entity_id, graph_pairs.arg2_entity_id) = new_keys.high_entity_id

),
{% else %}
relation_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),
{% endif %}

shared_entity_pairs as (

    select
        least(arg1_entity_id, arg2_entity_id) as low_entity_id,
        greatest(arg1_entity_id, arg2_entity_id) as high_entity_id

    from relation_pairs
    group by
        least(arg1_entity_id, arg2_entity_id),
        greatest(arg1_entity_id, arg2_entity_id)
    -- in two relations or more; min <> max lets Postgres hash (count(distinct) sorts)
    having min(rel_id) <> max(rel_id)

)

select * from shared_entity_pairs
