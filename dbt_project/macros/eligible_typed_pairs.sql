{% macro eligible_typed_pairs(typed_pairs, typed_relations) %}
    {#- Entity pairs of the typed relations that can still pass criterion 3: |πi(A∩B)| ≤ |πi(A)|, so a
        typing with |π1| or |π2| below r_min never yields an InfCand. One definition of this pruning for
        int_relation_overlaps; arguments are the model' import CTEs. -#}
    select
        {{ typed_pairs }}.typed_rel_id,
        {{ typed_pairs }}.rel_id,
        {{ typed_pairs }}.arg1_entity_id,
        {{ typed_pairs }}.arg2_entity_id

    from {{ typed_pairs }}
    inner join {{ typed_relations }}
        on {{ typed_pairs }}.typed_rel_id = {{ typed_relations }}.typed_rel_id
    where {{ typed_relations }}.n_arg1_entities >= {{ var('r_min') }}
        and {{ typed_relations }}.n_arg2_entities >= {{ var('r_min') }}
{% endmacro %}
