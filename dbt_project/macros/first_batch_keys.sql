{#
  The CTEs that give the rows of `counted` (natural_key, first_batch_id, n_instances) a compact integer
  key `id_column`, numbered by the first batch the natural key occurs in, then by the natural key, and
  end with `keyed` (id_column, natural_key, first_batch_id, n_instances). Batches are only appended
  after every previous one (the plan checks it), so a build that adds batches only appends ids and
  gives every older row the id a build from scratch gives it.
  Incremental: the counts are added to the previous build's, new keys get the ids after the largest
  one. Used by int_relation_keys and int_entity_keys.
#}
{% macro keys_numbered_by_first_batch(counted, natural_key, id_column) %}
{% if is_incremental() %}
previous_keys as (

    select * from {{ previous_build(this) }}

),

previous_bounds as (

    select coalesce(max({{ id_column }}), 0) as max_id
    from previous_keys

),

updated as (

    select
        previous_keys.{{ id_column }},
        {{ counted }}.{{ natural_key }},
        coalesce(previous_keys.first_batch_id, {{ counted }}.first_batch_id) as first_batch_id,
        coalesce(previous_keys.n_instances, 0) + {{ counted }}.n_instances as n_instances

    from {{ counted }}
    left join previous_keys
        on {{ counted }}.{{ natural_key }} = previous_keys.{{ natural_key }}

),

keyed as (

    select
        coalesce(
            updated.{{ id_column }},
            cast(previous_bounds.max_id + row_number() over (
                partition by updated.{{ id_column }} is null
                order by updated.first_batch_id, updated.{{ natural_key }}
            ) as integer)
        ) as {{ id_column }},
        updated.{{ natural_key }},
        updated.first_batch_id,
        updated.n_instances

    from updated
    cross join previous_bounds

)
{% else %}
keyed as (

    select
        cast(row_number() over (order by first_batch_id, {{ natural_key }}) as integer) as {{ id_column }},
        {{ natural_key }},
        first_batch_id,
        n_instances

    from {{ counted }}

)
{% endif %}
{% endmacro %}
