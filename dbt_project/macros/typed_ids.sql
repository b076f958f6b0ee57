{#
  typed_rel_id of the typing (rank_a, rank_b) of relation rel_id: (rel_id − 1)·k² + (rank_a − 1)·k + rank_b
  (k = top_k_types; type_rank, a kept slot type's place by name, is 1..k). A function of the relation
  and the two ranks, not a row
  number over every typed relation: a build that adds batches changes the ids of the relations whose
  typings changed only, and gives every typed relation the id a build from scratch gives it. Ids stay
  in (rel_id, rank_a, rank_b) order. Integer: at most 2^31 / k² relations (8.5e7 at k = 5); the cast
  fails loudly beyond.
#}
{% macro typed_relation_id(rel_id, rank_a, rank_b) -%}
{%- set k = var('top_k_types') | int -%}
cast((cast({{ rel_id }} as bigint) - 1) * {{ k * k }} + ({{ rank_a }} - 1) * {{ k }} + {{ rank_b }} as integer)
{%- endmacro %}

{#
  relation_pair_id of (premise, hypothesis, alignment): premise_rel_id·2^32 + hypothesis_rel_id·2 + 1 if
  crossed. One bigint column instead of a three-column key (the typed stage joins and groups on it, and
  the planner estimates one column far better than three correlated ones); a function of the relation
  pair, so it is the same in every build.
#}
{% macro relation_pair_id(premise_rel_id, hypothesis_rel_id, alignment) -%}
(cast({{ premise_rel_id }} as bigint) * 4294967296 + cast({{ hypothesis_rel_id }} as bigint) * 2
    + case when {{ alignment }} = 'crossed' then 1 else 0 end)
{%- endmacro %}

{# the premise, the hypothesis and the alignment of a relation_pair_id #}
{% macro relation_pair_premise(relation_pair_id) -%}
cast({{ integer_division(relation_pair_id, 4294967296) }} as integer)
{%- endmacro %}

{% macro relation_pair_hypothesis(relation_pair_id) -%}
cast({{ integer_division('(' ~ relation_pair_id ~ ') % 4294967296', 2) }} as integer)
{%- endmacro %}

{% macro relation_pair_alignment(relation_pair_id) -%}
case when ({{ relation_pair_id }}) % 2 = 1 then 'crossed' else 'straight' end
{%- endmacro %}

{# the rel_id of a typed_rel_id (macro typed_relation_id) #}
{% macro typed_relation_rel(typed_rel_id) -%}
{%- set k = var('top_k_types') | int -%}
cast({{ integer_division('(' ~ typed_rel_id ~ ') - 1', k * k) }} + 1 as integer)
{%- endmacro %}
