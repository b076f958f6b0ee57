{{ config(post_hook="{{ note_build_plan() }}") }}
{%- set blocker = incremental_blocker() if execute else 'not a build' %}
-- How this build is built, in one row: incremental (the models that keep state update the previous
-- build's tables from the new batches only, macros/incremental.sql) or full, and why not incremental.
-- Besides what incremental_blocker() knows before reading data, a build is full when a batch of the
-- last build was removed, when a new batch is older than the last build's batches (ids are numbered by
-- first batch: an older batch would renumber them), when a new batch adds a type to an entity already
-- in the graph (its relations' typings change), when a type map was added while types are mapped, or
-- when the previous tables were emptied by a crash (they are unlogged). Published with the build: the
-- next build compares its batches with int_build_batches and its vars with state_fingerprint.
-- depends_on: {{ ref('int_build_batches') }}
-- depends_on: {{ ref('stg_extract__entity_types') }}
with

{% if blocker == '' %}
build_batches as (

    select * from {{ ref('int_build_batches') }}

),

previous_batches as (

    select * from {{ previous_build('int_build_batches') }}

),

previous_entity_keys as (

    select * from {{ previous_build('int_entity_keys') }}

),

previous_entity_types as (

    select * from {{ previous_build('int_entity_types') }}

),

previous_relation_pairs as (

    select * from {{ previous_build('int_relation_pairs') }}

),

entity_types as (

    select * from {{ ref('stg_extract__entity_types') }}

),

{% if map_types_enabled() %}
-- used in the map_types branch below (the linter renders the other branch)
type_mappings as (  -- noqa: ST03

    select * from {{ ref('stg_extract__type_mappings') }}

),
{% endif %}

previous_bounds as (

    select coalesce(max(batch_id), 0) as previous_max_batch_id
    from previous_batches

),

new_batches as (

    select build_batches.*
    from build_batches
    left join previous_batches
        on build_batches.batch_id = previous_batches.batch_id
    where previous_batches.batch_id is null

),

removed_batches as (

    select previous_batches.*
    from previous_batches
    left join build_batches
        on previous_batches.batch_id = build_batches.batch_id
    where build_batches.batch_id is null

),

older_batches as (

    select new_batches.*
    from new_batches
    cross join previous_bounds
    where new_batches.batch_id < previous_bounds.previous_max_batch_id

),

new_type_rows as (

    select
        entity_types.entity_id,
        entity_types.type_name

    from entity_types
    inner join new_batches
        on entity_types.batch_id = new_batches.batch_id
    where {{ type_sources_filter('entity_types.type_source') }}

),

{% if map_types_enabled() %}
mapped_type_rows as (

    select
        new_type_rows.entity_id,
        type_mappings.target_type as type_name

    from new_type_rows
    inner join type_mappings
        on new_type_rows.type_name = type_mappings.source_type
    inner join build_batches
        on type_mappings.batch_id = build_batches.batch_id

),
{% else %}
mapped_type_rows as (

    select * from new_type_rows

),
{% endif %}

-- entities of the previous graph that a new batch gives a type they did not have
retyped_entities as (

    select previous_entity_keys.source_entity_id

    from mapped_type_rows
    inner join previous_entity_keys
        on mapped_type_rows.entity_id = previous_entity_keys.source_entity_id
    left join previous_entity_types
        on previous_entity_keys.entity_id = previous_entity_types.entity_id
        and mapped_type_rows.type_name = previous_entity_types.type_name
    where previous_entity_types.entity_id is null
        and mapped_type_rows.type_name <> {{ top_type() }}

),

-- an aggregate of its own: a scalar subquery in `checks` would be evaluated once per use of its column
-- in `decision` (Postgres pulls `checks` up into it), and this one reads every new type row
first_retyped_entity as (

    select min(source_entity_id) as retyped_entity_id
    from retyped_entities

),

checks as (

    select
        (select min(batch_id) from removed_batches) as removed_batch_id,
        (select min(batch_id) from older_batches) as older_batch_id,
        (select min(batch_id) from new_batches where kind = 'type_map') as new_type_map_batch_id,
        first_retyped_entity.retyped_entity_id,
        not exists (select 1 from previous_relation_pairs)
        and exists (select 1 from previous_batches where kind = 'corpus' and n_instances > 0) as is_emptied,
        (select count(*) from new_batches) as n_new_batches,
        previous_bounds.previous_max_batch_id

    from previous_bounds
    cross join first_retyped_entity

),

decision as (

    select
        case
            when removed_batch_id is not null
                then 'batch ' || cast(removed_batch_id as {{ dbt.type_string() }})
                    || ' was removed since the last build'
            when older_batch_id is not null
                then 'new batch ' || cast(older_batch_id as {{ dbt.type_string() }})
                    || ' is older than the last build''s batches'
            {%- if map_types_enabled() %}
            when new_type_map_batch_id is not null
                then 'type map batch ' || cast(new_type_map_batch_id as {{ dbt.type_string() }})
                    || ' was added (var map_types)'
            {%- endif %}
            when retyped_entity_id is not null
                then 'a new batch adds types to entities already in the graph (e.g. '
                    || retyped_entity_id || ')'
            when is_emptied
                then 'the last build''s tables were emptied (a server restart empties unlogged tables)'
        end as reason,
        n_new_batches,
        previous_max_batch_id

    from checks

),
{% else %}
decision as (

    select
        {{ sql_string_literal(blocker) }} as reason,
        cast(null as bigint) as n_new_batches,
        cast(null as bigint) as previous_max_batch_id

),
{% endif %}

final as (

    select
        decision.reason is null as is_incremental,
        coalesce(decision.reason, 'incremental') as reason,
        cast(decision.n_new_batches as bigint) as n_new_batches,
        -- a full build reads every batch
        case when decision.reason is null then cast(decision.previous_max_batch_id as bigint) end
            as previous_max_batch_id,
        {{ sql_string_literal(incremental_state_fingerprint()) }} as state_fingerprint,
        {{ 'true' if incremental_state_selected() else 'false' }} as state_complete,
        {{ sql_string_literal(invocation_id) }} as invocation_id,
        current_timestamp as built_at

    from decision

)

select * from final
