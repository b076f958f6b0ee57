{#
  Engine-specific types, behind adapter.dispatch like macros/engine.sql (default = Postgres).
#}

{# the 64-bit floating-point type of scores and ratios: Postgres `double precision`, Spark `double`
   (dbt.type_float() is no substitute: it is a 32-bit `float` on Spark) #}
{% macro type_double() -%}
{{ return(adapter.dispatch('type_double', 'sherliic')()) }}
{%- endmacro %}
{% macro default__type_double() -%}
double precision
{%- endmacro %}
{% macro spark__type_double() -%}
double
{%- endmacro %}
