{% macro can_reach_projection_bound(typed_relations) -%}
    {#- criterion 3's pruning of typed relations: |πi(A∩B)| ≤ |πi(A)|, so a typing with |π1| or |π2|
        below r_min never yields an InfCand (int_typed_overlaps) -#}
    {{ typed_relations }}.n_arg1_entities >= {{ var('r_min') }}
        and {{ typed_relations }}.n_arg2_entities >= {{ var('r_min') }}
{%- endmacro %}
