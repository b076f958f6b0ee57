{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
with

relation_keys as (

    select * from {{ ref('int_relation_keys') }}

),

-- ⊤ counts every pair and slot entity of a relation
top_counts as (

    select * from {{ ref('int_slot_type_counts') }}
    where type_name = {{ top_type() }}

),

typed_relations as (

    select * from {{ ref('int_typed_relations') }}

),

-- |R| and |π1(R)| from slot 1, |π2(R)| from slot 2
pair_stats as (

    select
        rel_id,
        sum(case when slot = 1 then n_entity_pairs else 0 end) as n_entity_pairs,
        sum(case when slot = 1 then n_entities else 0 end) as n_arg1_entities,
        sum(case when slot = 2 then n_entities else 0 end) as n_arg2_entities

    from top_counts
    group by rel_id

),

typing_stats as (

    select
        rel_id,
        count(*) as n_typed_relations

    from typed_relations
    group by rel_id

),

labelled as (

    select
        relation_keys.rel_id,
        relation_keys.path,
        {{ strip_up_marker(path_element('relation_keys.path', -1)) }} in ('nsubj', 'nsubjpass')
            as is_reversed,
        {{ path_element('relation_keys.path', 2) }} as first_lemma,
        {{ path_element('relation_keys.path', -2) }} as last_lemma,
        relation_keys.n_instances

    from relation_keys

),

final as (

    select
        labelled.rel_id,
        labelled.path,
        case when labelled.is_reversed then labelled.last_lemma else labelled.first_lemma end
            as predicate_lemma,
        labelled.is_reversed,
        cast(labelled.n_instances as bigint) as n_instances,
        cast(pair_stats.n_entity_pairs as bigint) as n_entity_pairs,
        cast(pair_stats.n_arg1_entities as bigint) as n_arg1_entities,
        cast(pair_stats.n_arg2_entities as bigint) as n_arg2_entities,
        cast(coalesce(typing_stats.n_typed_relations, 0) as bigint) as n_typed_relations,
        {{ relation_key('labelled.path') }} as relation_key

    from labelled
    inner join pair_stats
        on labelled.rel_id = pair_stats.rel_id
    left join typing_stats
        on labelled.rel_id = typing_stats.rel_id

)

select * from final
