{#
  Incremental builds (Postgres; docs/design.md §2, "Incremental builds"). A build that only adds batches
  updates the tables of the build published in its schema instead of rebuilding them. One pattern:

  1. The plan. int_build_plan (macros/build_plan.sql) decides once per build whether it is incremental
     and says why not in one line. `is_incremental()` is true in an incremental build for the models
     that keep state (materialized=incremental_materialization(): 'incremental' on Postgres, 'table'
     elsewhere, so Spark always builds them in full); `previous_max_batch_id()` is the last batch the
     previous build read (0 in a full build): a row whose first_batch_id is larger is new to the graph.
  2. What an incremental model selects. In a full build, every row. In an incremental build, its
     changed rows only (its delta): every row of each key (config unique_key) that the new batches
     touch, computed from the changed rows of the models it reads (`changed_rows(ref('x'))`: their
     delta, or every row in a full build) and from the previous build's tables (`previous_build(this)`,
     `previous_build(ref('x'))`: the one read outside the build; dbt sees the lineage through the ref).
     Relations whose kept slot types changed (int_retyped_relations: in a full build every ranked
     relation) are recomputed from scratch: config reset_relations_on names the columns that hold
     their rel_id, and all their rows are in the delta.
  3. How the changed rows replace the old ones. The materialization (materializations/incremental.sql)
     writes the delta as `<model>__delta` into the staging schema and, under the model's name, a view:
     the previous build's rows whose key is not in the delta and whose relation is not recomputed,
     plus the delta. Later models of the build read that view through ref().
  4. How it is published. The transaction that publishes the build (macros/atomic_publish.sql)
     deletes the replaced rows from the live table and inserts the delta; a failed build publishes
     nothing. The live tables accumulate dead rows, which autovacuum reclaims.
#}

{# materialized= of a model that keeps state between builds #}
{% macro incremental_materialization() -%}
{{ return('incremental' if target.type == 'postgres' else 'table') }}
{%- endmacro %}

{# dbt's is_incremental(), answered by this build's plan: does this model update the previous build's
   table from its changed rows? #}
{% macro is_incremental() -%}
{{ return(build_plan().incremental and model.config.materialized == 'incremental') }}
{%- endmacro %}

{# the last batch of the previous build (0 in a full build): rows of later batches are new #}
{% macro previous_max_batch_id() -%}
{{ return(build_plan().previous_max_batch_id) }}
{%- endmacro %}

{# The previous build's table of a model, where that build published it (the live schema). `relation`
   is `this` or a ref(), so that dbt sees the lineage; int_build_plan, which is built before the models
   it checks (a ref would be a cycle), gives their names. The one read of a previous build's table. #}
{% macro previous_build(relation) -%}
    {%- if relation is string -%}
        {%- set node = graph.nodes['model.' ~ project_name ~ '.' ~ relation] -%}
        {%- set relation = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias) -%}
    {%- endif -%}
    {{ return(relation.incorporate(path={'schema': live_schema(relation.schema)}, type='table', require_alias=False)) }}
{%- endmacro %}

{# The rows of `relation` (a ref() of an incremental model) that this build changed: its delta in an
   incremental build, every row in a full build. The relations these macros return take the caller's
   alias (`… as changed`) also under `dbt run --empty`, which renders a ref as an aliased subquery. #}
{% macro changed_rows(relation) -%}
{{ return(delta_relation(relation) if build_plan().incremental else relation.incorporate(require_alias=False)) }}
{%- endmacro %}

{# the table of the changed rows an incremental model wrote in this build #}
{% macro delta_relation(relation) -%}
{{ return(relation.incorporate(path={'identifier': relation.identifier ~ '__delta'}, type='table', require_alias=False)) }}
{%- endmacro %}

{# `column` names a relation this build recomputes from scratch (int_retyped_relations) #}
{% macro is_retyped_relation(column) -%}
({{ column }} in (select rel_id from {{ ref('int_retyped_relations') }}))
{%- endmacro %}

{# The staging relation of int_retyped_relations, for the materialization and the publish, which replace
   the rows of the relations it names. A model with reset_relations_on reads it through its refs (dbt
   builds it after int_retyped_relations); a model built before it is an error. #}
{% macro retyped_relations_table() -%}
    {%- set node = graph.nodes['model.' ~ project_name ~ '.int_retyped_relations'] -%}
    {{ return(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias, type='table')) }}
{%- endmacro %}

{# The live rows an incremental build replaces: the rows of a key the delta has, and the rows of the
   relations it recomputes (reset_on: SQL expressions over the live row's columns that hold a rel_id).
   replaced_rows_condition: one condition, for the publishing DELETE (one scan of the live table; each
   part a hashed subplan); kept_rows_conditions: the conditions for the rows kept, ANDed in the staging
   view (the key as an anti-join). #}
{% macro replaced_rows_condition(delta, unique_key, reset_on) -%}
    {%- set keys = unique_key | join(', ') -%}
    {%- set parts = ['(' ~ keys ~ ') in (select ' ~ keys ~ ' from ' ~ delta ~ ')'] -%}
    {%- for expression in reset_on -%}
        {%- do parts.append('(' ~ expression ~ ') in (select rel_id from ' ~ retyped_relations_table() ~ ')') -%}
    {%- endfor -%}
    {{ return(parts | join('\n        or ')) }}
{%- endmacro %}

{% macro kept_rows_conditions(live_alias, delta, unique_key, reset_on) -%}
    {%- set key_match = [] -%}
    {%- for column in unique_key -%}
        {%- do key_match.append('delta.' ~ column ~ ' = ' ~ live_alias ~ '.' ~ column) -%}
    {%- endfor -%}
    {%- set conditions = ['not exists (select 1 from ' ~ delta ~ ' as delta where ' ~ key_match | join(' and ') ~ ')'] -%}
    {%- for expression in reset_on -%}
        {%- do conditions.append('(' ~ expression ~ ') not in (select rel_id from ' ~ retyped_relations_table() ~ ')') -%}
    {%- endfor -%}
    {{ return(conditions) }}
{%- endmacro %}
