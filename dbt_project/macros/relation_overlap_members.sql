{% macro relation_overlap_members(premise_pairs, hypothesis_pairs) %}
    {#- The members of the untyped overlaps A∩B between the pairs of two CTEs (rel_id, arg1_entity_id,
        arg2_entity_id, arg1_mask, arg2_mask): the entity pairs that a premise relation A and a
        hypothesis relation B of a larger rel_id both have, straight (A(x,y) and B(x,y)) or crossed
        (A(x,y) and B(y,x)), in the premise's orientation, with the hypothesis' masks of the slots x and
        y fill there (slots 1 and 2 straight, 2 and 1 crossed). int_relation_overlaps: every pair of
        the graph with every other; in an incremental build, the changed pairs with every other. -#}
    select
        premise.rel_id as premise_rel_id,
        hypothesis.rel_id as hypothesis_rel_id,
        'straight' as alignment,
        premise.arg1_entity_id,
        premise.arg2_entity_id,
        premise.arg1_mask as arg1_premise_mask,
        premise.arg2_mask as arg2_premise_mask,
        hypothesis.arg1_mask as arg1_hypothesis_mask,
        hypothesis.arg2_mask as arg2_hypothesis_mask

    from {{ premise_pairs }} as premise
    inner join {{ hypothesis_pairs }} as hypothesis
        on premise.arg1_entity_id = hypothesis.arg1_entity_id
        and premise.arg2_entity_id = hypothesis.arg2_entity_id
        and premise.rel_id < hypothesis.rel_id

    union all

    -- x fills the hypothesis' second slot and y its first
    select
        premise.rel_id as premise_rel_id,
        hypothesis.rel_id as hypothesis_rel_id,
        'crossed' as alignment,
        premise.arg1_entity_id,
        premise.arg2_entity_id,
        premise.arg1_mask as arg1_premise_mask,
        premise.arg2_mask as arg2_premise_mask,
        hypothesis.arg2_mask as arg1_hypothesis_mask,
        hypothesis.arg1_mask as arg2_hypothesis_mask

    from {{ premise_pairs }} as premise
    inner join {{ hypothesis_pairs }} as hypothesis
        on premise.arg1_entity_id = hypothesis.arg2_entity_id
        and premise.arg2_entity_id = hypothesis.arg1_entity_id
        and premise.rel_id < hypothesis.rel_id
{% endmacro %}
