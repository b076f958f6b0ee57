{#
  The name of the build dbt is building, as results name it (results.verifier_scores.build): 'default'
  for the marts in schema `warehouse`, `<name>` for a named build's schema `build_<name>`
  (warehouse.target.Target.marts_schema). target.schema is the live schema on either engine; the
  staging suffix of atomic_publish.sql is added per model, not to it.
#}
{% macro current_build_name() -%}
{%- set schema = target.schema -%}
{{ return('default' if schema == 'warehouse' else (schema[6:] if schema.startswith('build_') else schema)) }}
{%- endmacro %}
