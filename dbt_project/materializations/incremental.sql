{#
  The `incremental` materialization of the models that keep state between builds (Postgres; macros/
  incremental.sql describes the pattern). In a full build: the model's table in the staging schema, as
  the `table` materialization. In an incremental build: the model's changed rows as `<model>__delta`,
  and under the model's name a view of the updated table (the live table without the rows the delta
  replaces, plus the delta); publishing applies the delta (macros/atomic_publish.sql).
  A directory of its own: sqlfluff's jinja templater (`make lint`) reads macros/ and knows no
  materialization tag.
#}

{% materialization incremental, adapter='postgres' %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set unique_key = config.get('unique_key') -%}
    {%- set unique_key = [unique_key] if unique_key is string else unique_key -%}
    {%- set reset_on = config.get('reset_relations_on', []) -%}
    {%- set relations = [target_relation] -%}
    {{ drop_relation_if_exists(load_cached_relation(this)) }}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}

    {%- if not is_incremental() %}
        {% call statement('main') -%}
            {{ get_create_table_as_sql(False, target_relation, sql) }}
        {%- endcall %}
        {{ run_hooks(post_hooks, inside_transaction=True) }}
        {% do persist_docs(target_relation, model) %}
    {%- else %}
        {%- if reset_on and load_relation(retyped_relations_table()) is none -%}
            {{ exceptions.raise_compiler_error(
                model.name ~ ' recomputes retyped relations (reset_relations_on) but is built before int_retyped_relations: read it through ref()'
            ) }}
        {%- endif -%}
        {#- the delta is analyzed here; the model's post-hooks (analyze) are for its full builds #}
        {%- set delta = delta_relation(this) -%}
        {#- both go to dbt's relation cache: publishing looks the delta up there -#}
        {%- set relations = [this.incorporate(type='view'), delta] -%}
        {% call statement('main') -%}
            create unlogged table {{ delta }} as (
                {{ sql }}
            );
            analyze {{ delta }};
            {{ pause_autovacuum_of(delta) }};
            create view {{ this.incorporate(type='view') }} as (
                select * from {{ previous_build(this) }} as live
                where {{ kept_rows_conditions('live', delta, unique_key, reset_on) | join('\n                    and ') }}
                union all
                select * from {{ delta }}
            )
        {%- endcall %}
    {%- endif %}

    {{ adapter.commit() }}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {{ return({'relations': relations}) }}
{% endmaterialization %}
