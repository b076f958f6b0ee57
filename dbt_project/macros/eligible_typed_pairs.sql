{% macro eligible_typed_pairs(typed_pairs, typed_relations) %}
    {#- Entity pairs of the typed relations that can still pass criterion 3 (can_reach_projection_bound);
        arguments are the model's import CTEs. -#}
    select
        {{ typed_pairs }}.typed_rel_id,
        {{ typed_pairs }}.rel_id,
        {{ typed_pairs }}.arg1_entity_id,
        {{ typed_pairs }}.arg2_entity_id

    from {{ typed_pairs }}
    inner join {{ typed_relations }}
        on {{ typed_pairs }}.typed_rel_id = {{ typed_relations }}.typed_rel_id
    where {{ can_reach_projection_bound(typed_relations) }}
{% endmacro %}

{% macro can_reach_projection_bound(typed_relations) -%}
    {#- criterion 3's pruning of typed relations: |πi(A∩B)| ≤ |πi(A)|, so a typing with |π1| or |π2|
        below r_min never yields an InfCand (int_relation_overlaps, int_overlap_typing_sizes) -#}
    {{ typed_relations }}.n_arg1_entities >= {{ var('r_min') }}
        and {{ typed_relations }}.n_arg2_entities >= {{ var('r_min') }}
{%- endmacro %}
