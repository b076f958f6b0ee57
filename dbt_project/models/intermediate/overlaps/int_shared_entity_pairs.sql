{{ config(
    pre_hook="{{ heavy_model_settings() }}",
    post_hook="{{ analyze_table() }}",
) }}
-- The unordered entity pairs {x, y} that two relations or more have, in either orientation: the only
-- pairs that can be in the overlap of two relations (int_relation_overlaps, step 1). Counted over every
-- relation pair, not only those of typed relations, so that this model needs int_relation_pairs alone
-- and runs beside the slot typing models instead of on the build's critical path; the extra keys only
-- let through pairs that find no partner there, so the overlaps are the same.
-- Built in full in every build: an incremental path saved about a second, off the critical path.
with

relation_pairs as (

    select * from {{ ref('int_relation_pairs') }}

),

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
