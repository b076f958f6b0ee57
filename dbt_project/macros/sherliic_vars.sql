{#
  Vars with defaults that are not in dbt_project.yml (the paper's thresholds are there):
    top_type      spelling of ⊤, the "no restriction" type (default 'thing', as in Hosseini et al.'s
                  typed entailment graphs); must not be a real type name of your type table.
    type_sources  list of raw.entity_types.type_source values whose types form τ(e)
                  (default null = every source).
    map_types     true: replace each type by its targets in raw.type_mappings (types without a mapping
                  are dropped), e.g. Freebase -> FIGER; false (default): use the types as loaded.
    work_mem      Postgres work_mem for the heavy intermediate models (default '256MB').
#}

{% macro top_type() -%}
'{{ var("top_type", "thing") }}'
{%- endmacro %}

{% macro type_sources_filter(column) -%}
{%- set sources = var("type_sources", none) -%}
{%- if sources is none -%}
true
{%- else -%}
{%- if sources is string -%}{%- set sources = [sources] -%}{%- endif -%}
{{ column }} in ({%- for s in sources -%}'{{ s | replace("'", "''") }}'{{ ", " if not loop.last }}{%- endfor -%})
{%- endif -%}
{%- endmacro %}

{% macro map_types_enabled() -%}
{{ return(var("map_types", false) in [true, "true", "True", 1, "1"]) }}
{%- endmacro %}
