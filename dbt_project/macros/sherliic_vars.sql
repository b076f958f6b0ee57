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

{#
  The batches the graph is built from: every non-corpus batch (type tables and maps are global), and
  the corpus batches of the corpora named in the var corpora (null = every corpus). A malformed value
  renders as selecting no corpus: models are parsed before validate_vars stops the run with its message.
#}
{% macro selected_corpora_filter(kind_column, corpus_column) -%}
{%- set corpora = var("corpora") -%}
{%- if corpora is none -%}
true
{%- else -%}
{%- set names = [corpora] if corpora is string else (corpora if corpora is iterable and corpora is not mapping else []) -%}
{%- set names = names | select('string') | list -%}
({{ kind_column }} <> 'corpus'
{%- if names %} or {{ corpus_column }} in (
{%- for name in names -%}{{ sql_string_literal(name) }}{{ ", " if not loop.last }}{%- endfor -%}
){%- endif -%})
{%- endif -%}
{%- endmacro %}
