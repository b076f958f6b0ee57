{#
  The project's vars are declared with their defaults in dbt_project.yml and checked before any model
  runs (validate_vars, an on-run-start hook). Text vars reach SQL only through sql_string_literal.
#}

{# a text value as a SQL string literal of the target engine #}
{% macro sql_string_literal(value) -%}
{{ return(adapter.dispatch('sql_string_literal', 'sherliic')(value)) }}
{%- endmacro %}
{# Postgres (standard_conforming_strings, the default since 9.1): only a quote needs escaping, by doubling #}
{% macro default__sql_string_literal(value) -%}
'{{ value | string | replace("'", "''") }}'
{%- endmacro %}
{# Spark: backslash escapes are on, and 'a''b' would be two adjacent literals ('ab') #}
{% macro spark__sql_string_literal(value) -%}
'{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}

{% macro top_type() -%}
{{ sql_string_literal(var("top_type")) }}
{%- endmacro %}

{% macro type_sources_filter(column) -%}
{%- set sources = var("type_sources") -%}
{%- if sources is none -%}
true
{%- else -%}
{%- if sources is string -%}{%- set sources = [sources] -%}{%- endif -%}
{{ column }} in ({%- for s in sources -%}{{ sql_string_literal(s) }}{{ ", " if not loop.last }}{%- endfor -%})
{%- endif -%}
{%- endmacro %}

{% macro map_types_enabled() -%}
{{ return(var("map_types") is sameas true) }}
{%- endmacro %}
