{#
  A stable key: md5 of the natural key's columns, cast to text and joined by '|' (null -> '_null_').
  Unlike the integer ids (row numbers of one build) it is the same in every build and on every
  engine for the same natural key, so consumers can join rows across builds. md5(string) and
  concat exist in Postgres and Spark SQL; the cast goes through dbt.type_string().
#}
{% macro surrogate_key(columns) -%}
{{ return(adapter.dispatch('surrogate_key', 'sherliic')(columns)) }}
{%- endmacro %}

{% macro default__surrogate_key(columns) -%}
md5(concat(
    {%- for column in columns %}
    coalesce(cast({{ column }} as {{ dbt.type_string() }}), '_null_'){{ ", '|'," if not loop.last }}
    {%- endfor %}
))
{%- endmacro %}

{# the same text with Postgres' || operator: concat() formats each argument through its type's output
   function, which made the key a quarter dearer on the 12M rows of teg_edges at 5M instances #}
{% macro postgres__surrogate_key(columns) -%}
md5(
    {%- for column in columns %}
    coalesce(cast({{ column }} as text), '_null_'){{ " || '|' ||" if not loop.last }}
    {%- endfor %}
)
{%- endmacro %}

{# the stable key of a relation: one definition for the relations mart and untyped_edges, which computes
   it from int_relation_keys so that it need not wait for that mart (it then runs while the slot typing
   models run one at a time) #}
{% macro relation_key(path) -%}
{{ surrogate_key([path]) }}
{%- endmacro %}
