{% macro typing_count_classes(pair_typings, slot_entity_classes) %}
    {#- The parts that sum to the sizes of typed relations |T|, its instances, |π1(T)| and |π2(T)|
        (paper §2.2), per relation and pair of type masks (bit r-1 = the slot's type of type_rank r, its
        place by name): a
        typing (s, u) holds the pairs of the classes whose arg1_mask has bit s-1 and arg2_mask bit u-1,
        the first arguments of the classes with s in their own and u in their partners' mask, the second
        arguments of those with u in their own and s in their partners' mask.
        pair_typings: rows of int_relation_pair_typings; slot_entity_classes: rows of
        int_slot_entity_classes (each read once). Counts are integers: sums of integers aggregate in a
        bigint, sums of bigints in numeric (several times slower on millions of groups). -#}
    select
        rel_id,
        arg1_mask,
        arg2_mask,
        cast(count(*) as integer) as n_pairs,
        sum(n_instances) as n_instances,
        0 as n_arg1_entities,
        0 as n_arg2_entities

    from {{ pair_typings }}
    group by
        rel_id,
        arg1_mask,
        arg2_mask

    union all

    select
        rel_id,
        case when slot = 1 then type_mask else partner_mask end as arg1_mask,
        case when slot = 1 then partner_mask else type_mask end as arg2_mask,
        0 as n_pairs,
        0 as n_instances,
        cast(case when slot = 1 then count(*) else 0 end as integer) as n_arg1_entities,
        cast(case when slot = 2 then count(*) else 0 end as integer) as n_arg2_entities

    from {{ slot_entity_classes }}
    group by
        rel_id,
        slot,
        type_mask,
        partner_mask
{% endmacro %}

{% macro typing_class_sums(typings, count_classes) %}
    {#- The sizes of each typing (rel_id, type_a, type_b, type_rank_a, type_rank_b) of `typings`: the sums
        of the count classes of its relation that admit it -#}
    select
        {{ typings }}.rel_id,
        {{ typings }}.type_a,
        {{ typings }}.type_b,
        {{ typings }}.type_rank_a,
        {{ typings }}.type_rank_b,
        sum({{ count_classes }}.n_pairs) as n_entity_pairs,
        sum({{ count_classes }}.n_instances) as n_instances,
        sum({{ count_classes }}.n_arg1_entities) as n_arg1_entities,
        sum({{ count_classes }}.n_arg2_entities) as n_arg2_entities

    from {{ typings }}
    inner join {{ count_classes }}
        on {{ typings }}.rel_id = {{ count_classes }}.rel_id
    where {{ bit_is_set(count_classes ~ '.arg1_mask', typings ~ '.type_rank_a - 1') }}
        and {{ bit_is_set(count_classes ~ '.arg2_mask', typings ~ '.type_rank_b - 1') }}
    group by
        {{ typings }}.rel_id,
        {{ typings }}.type_a,
        {{ typings }}.type_b,
        {{ typings }}.type_rank_a,
        {{ typings }}.type_rank_b
{% endmacro %}

{# The rows of `relation` (a ref) of the relations this build recomputes from scratch. An incremental
   model that recomputes them (config reset_relations_on=['rel_id']) has every one of them in its delta,
   so in an incremental build they are read from the delta (tens of thousands of rows) instead of from
   the view of its updated table (millions, scanned in full). #}
{% macro recomputed_relation_rows(relation) -%}
    {%- if is_incremental() -%}
select * from {{ changed_rows(relation) }}
where {{ is_retyped_relation('rel_id') }}
    {%- else -%}
select * from {{ relation }}
    {%- endif -%}
{%- endmacro %}
