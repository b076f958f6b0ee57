{#
  Atomic publication of a build (Postgres): a reader sees the previous warehouse or the new one,
  never a mix of both. The schema is the build's (profiles.yml: `warehouse` for the default build,
  `build_<name>` for `sherliic-dbt --build NAME`).

  - generate_schema_name puts every model into a staging schema, `<schema>__next` (warehouse__next);
  - ref() points at the staging schema only for models this invocation builds (dbt run/build and
    selected); every other model is read where readers read it, in the live schema, so partial
    builds (`--select tag:annotation`) and `dbt test` work on the live warehouse;
  - on-run-start (prepare_staging_schemas) empties the staging schemas left by a killed build;
  - on-run-end (publish_staging_schemas) moves the models built into the live schema in one
    transaction, and only when every node of the invocation succeeded (models and, in `dbt build`,
    their tests); otherwise it drops the staging schema and the live warehouse stays as it was. The same
    transaction marks the build's record published (claim_build_record, below), and refuses to publish
    a build sherliic-dbt has marked cancelled.

  The move is `drop <old>; alter table <new> set schema <live>` per model: readers already inside a
  query finish on the old tables (the drop waits for them), later queries see the new ones; views
  keep pointing at the tables they were built on (Postgres binds views by OID, not by name).

  `dbt docs generate` must find the relations where they are published: with the dbt var
  docs_catalog (true only there; make dbt-docs) the manifest names the live schemas. A var, not the
  command name: changing a var makes dbt parse the project again, so a cached manifest of one kind is
  never reused by the other, and validate_vars refuses a build with it.

  An incremental build (macros/incremental.sql) leaves, for each model that keeps state, its changed rows
  in `<model>__delta` beside a view of the updated table; publishing applies them to the live table
  in the same transaction.

  Spark (dbt-spark, Hive-style databases) has neither transactional DDL nor tables moving between
  databases, so there the staging suffix is empty: models are built in place, one at a time, as
  before (docs/design.md §2), and every model is built in full.
#}

{# suffix of the schema a build writes into before it is published; '' = build in place #}
{% macro staging_schema_suffix() -%}
{{ return(adapter.dispatch('staging_schema_suffix', 'sherliic')()) }}
{%- endmacro %}
{% macro default__staging_schema_suffix() -%}
{{ return('') }}
{%- endmacro %}
{% macro postgres__staging_schema_suffix() -%}
{{ return('__next') }}
{%- endmacro %}

{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- set live = default__generate_schema_name(custom_schema_name, node) | trim -%}
    {%- if node.resource_type in ['model', 'seed'] and not var('docs_catalog', false) -%}
        {{ live ~ staging_schema_suffix() }}
    {%- else -%}
        {{ live }}
    {%- endif -%}
{%- endmacro %}

{# does this invocation build models (and publish them at the end)? #}
{% macro builds_into_staging() -%}
{{ return(execute and flags.WHICH in ['run', 'build', 'seed'] and staging_schema_suffix() != '') }}
{%- endmacro %}

{# the live schema of a staging schema #}
{% macro live_schema(schema) -%}
{%- set suffix = staging_schema_suffix() -%}
{{ return(schema[:-(suffix | length)] if suffix and schema.endswith(suffix) else schema) }}
{%- endmacro %}

{% macro ref() -%}
    {%- set version = kwargs.get('version') or kwargs.get('v') -%}
    {%- if varargs | length == 1 -%}
        {%- set package_name = project_name -%}
        {%- set model_name = varargs[0] -%}
        {%- set relation = builtins.ref(model_name, version=version) -%}
    {%- else -%}
        {%- set package_name = varargs[0] -%}
        {%- set model_name = varargs[1] -%}
        {%- set relation = builtins.ref(package_name, model_name, version=version) -%}
    {%- endif -%}
    {#- unit-test fixtures and ephemeral CTEs have no schema: left alone -#}
    {%- if execute and relation.schema and live_schema(relation.schema) != relation.schema -%}
        {%- set built_here = builds_into_staging() and (
            ('model.' ~ package_name ~ '.' ~ model_name) in selected_resources
            or ('seed.' ~ package_name ~ '.' ~ model_name) in selected_resources
        ) -%}
        {%- if not built_here or view_of_updated_table(package_name, model_name) -%}
            {%- set relation = relation.incorporate(path={'schema': live_schema(relation.schema)}) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}

{# Does a view of this build read an incremental model that this build updates in place (macros/
   incremental.sql)? The view then reads the live table, which holds the update once the build is
   published; the staging schema, which the view would otherwise depend on, is dropped then. #}
{% macro view_of_updated_table(package_name, model_name) -%}
    {%- if model.resource_type != 'model' or model.config.materialized != 'view' -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set node = graph.nodes.get('model.' ~ package_name ~ '.' ~ model_name) -%}
    {{ return(node is not none and node.config.materialized == 'incremental' and build_plan().incremental) }}
{%- endmacro %}

{# on-run-start: a killed build may have left a staging schema; start from an empty one (through the
   adapter, so that dbt's relation cache forgets the old contents too) #}
{% macro prepare_staging_schemas() -%}
    {%- if builds_into_staging() -%}
        {%- for schema in staging_schemas() -%}
            {%- set relation = api.Relation.create(database=target.database, schema=schema) -%}
            {%- do adapter.drop_schema(relation) -%}
            {%- do adapter.create_schema(relation) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}

{# the staging schemas of this invocation's selected models and seeds #}
{% macro staging_schemas() -%}
    {%- set schemas = [] -%}
    {%- for node in graph.nodes.values() -%}
        {%- if node.unique_id in selected_resources and node.resource_type in ['model', 'seed']
            and node.schema != live_schema(node.schema) and node.schema not in schemas -%}
            {%- do schemas.append(node.schema) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(schemas) }}
{%- endmacro %}

{# on-run-end: the SQL that publishes the build (every node succeeded) or discards it. An incremental
   model built as a delta (macros/incremental.sql) is published by applying the delta to its live
   table; every other relation replaces its live one. #}
{% macro publish_staging_schemas(results) -%}
    {%- if not builds_into_staging() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set succeeded = ['success', 'pass', 'warn'] -%}
    {%- set failed = results | rejectattr('status', 'in', succeeded) | list -%}
    {%- set built = [] if failed else results | selectattr('node.resource_type', 'in', ['model', 'seed'])
        | map(attribute='node') | list -%}
    {%- set updated = [] -%}
    {%- set replaced = [] -%}
    {%- for node in built -%}
        {%- set delta = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias ~ '__delta') -%}
        {%- do (updated if delta is not none else replaced).append(node) -%}
    {%- endfor -%}
    {%- set live_schemas = [] -%}
    {%- for node in built if live_schema(node.schema) not in live_schemas -%}
        {%- do live_schemas.append(live_schema(node.schema)) -%}
    {%- endfor %}
    begin;
    {{ claim_build_record(built, created_mart_rows(results, replaced)) }}
    {%- if updated %}
    {#- applying the deltas hashes their keys: room for them (Postgres' default is 4MB) #}
    set local work_mem = {{ sql_string_literal(var('work_mem')) }};
    {%- endif %}
    {%- for live in live_schemas %}
    create schema if not exists {{ adapter.quote(live) }};
    {%- endfor %}
    {#- deltas first: their conditions read staging tables that are moved below -#}
    {%- for node in updated %}
        {%- set live = api.Relation.create(database=node.database, schema=live_schema(node.schema), identifier=node.alias) -%}
        {%- set delta = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias ~ '__delta') -%}
        {%- set retyped_node = graph.nodes['model.' ~ project_name ~ '.int_retyped_relations'] -%}
        {%- set retyped = api.Relation.create(database=retyped_node.database, schema=retyped_node.schema, identifier=retyped_node.alias) -%}
        {%- set unique_key = node.config.unique_key -%}
        {%- set unique_key = [unique_key] if unique_key is string else unique_key %}
    delete from {{ live }}
    where {{ replaced_rows_condition(delta, unique_key, node.config.get('reset_relations_on', []), retyped) }};
    insert into {{ live }} select * from {{ delta }};
    {%- endfor %}
    {#- old relations dependents first (results are in build order): an old view must go before the
        relations it reads; one that this build does not replace makes the drop fail (no cascade), and
        then nothing is published -#}
    {%- for node in replaced | reverse %}
        {%- set old = adapter.get_relation(
            database=node.database, schema=live_schema(node.schema), identifier=node.alias
        ) -%}
        {%- if old is not none %}
    drop {{ old.type | replace('_', ' ') }} {{ old }};
        {%- endif %}
    {%- endfor %}
    {%- for node in replaced %}
    alter table {{ adapter.quote(node.schema) }}.{{ adapter.quote(node.alias) }} set schema {{ adapter.quote(live_schema(node.schema)) }};
        {#- autovacuum was paused while the table was staged (pause_autovacuum) #}
        {%- if node.config.materialized in paused_materializations() %}
    alter table {{ adapter.quote(live_schema(node.schema)) }}.{{ adapter.quote(node.alias) }} reset (autovacuum_enabled);
        {%- endif %}
    {%- endfor %}
    {#- the tables of an incremental build must come from one build: when some of them are published
        without the plan that records their batches, the next build starts from scratch -#}
    {%- set state = incremental_state_models() -%}
    {%- set published = built | map(attribute='unique_id') | list -%}
    {%- if published | select('in', state) | list and ('model.' ~ project_name ~ '.int_build_plan') not in published %}
        {%- set plan_node = graph.nodes['model.' ~ project_name ~ '.int_build_plan'] %}
    drop table if exists {{ adapter.quote(live_schema(plan_node.schema)) }}.{{ adapter.quote(plan_node.alias) }};
    {%- endif %}
    {%- for schema in staging_schemas() %}
    drop schema if exists {{ adapter.quote(schema) }} cascade;
    {%- endfor %}
    commit;
{%- endmacro %}

{# The rows of the marts this build created with CREATE TABLE AS, as dbt reported them ('SELECT n'): the
   build record's row counts without a count(*) after the build. That count was the first read of the
   new tables, so it set the hint bits of every page, and with data checksums each page then wrote a full
   page image to the WAL (1.1 GB and 4.3 s for `teg_edges` at 5M instances). Marts updated from a delta,
   and views, are not in it (sherliic-dbt counts those). #}
{% macro created_mart_rows(results, replaced) -%}
    {%- set replaced_ids = replaced | map(attribute='unique_id') | list -%}
    {%- set counts = {} -%}
    {%- for result in results
        if result.node.unique_id in replaced_ids and result.node.fqn[1] == 'marts'
        and (result.adapter_response or {}).get('code') == 'SELECT' -%}
        {%- do counts.update({result.node.alias: result.adapter_response.get('rows_affected')}) -%}
    {%- endfor -%}
    {{ return(counts) }}
{%- endmacro %}

{# Inside the publishing transaction, when sherliic-dbt records this build (SHERLIIC_BUILD_ID, read only
   at run time so that its new value per build never makes dbt parse the project again): the build's
   record is locked and must still be running (sherliic-dbt marks it cancelled on SIGINT/SIGTERM before
   it passes the signal on, so a cancelled build never publishes, whichever comes first), and is marked
   published with the models it publishes and their row counts where dbt reported them, in the
   transaction that publishes them. #}
{% macro claim_build_record(built, row_counts) -%}
    {%- if not built -%}
        {{ return('') }}
    {%- endif -%}
    {%- set build_id = env_var('SHERLIIC_BUILD_ID', '') -%}
    {%- set models = built | map(attribute='alias') | list -%}
    {%- set schema = live_schema(built[0].schema) -%}
    {%- if not build_id %}
    {#- plain dbt (not through sherliic-dbt): a record without provenance, so that readers never take an
        older record for the marts this publishes -#}
    do $$
    begin
        if to_regclass('builds.builds') is not null then
            insert into builds.builds (
                build_name, schema_name, command, status, finished_at, published_at, published_models, row_counts
            ) values (
                {{ sql_string_literal('default' if schema == 'warehouse' else schema | replace('build_', '', 1)) }},
                {{ sql_string_literal(schema) }},
                {{ sql_string_literal(flags.WHICH ~ ' (plain dbt, not sherliic-dbt: inputs, vars and code not recorded)') }},
                'succeeded', clock_timestamp(), clock_timestamp(), {{ sql_string_literal(tojson(models)) }}::jsonb,
                {{ sql_string_literal(tojson(row_counts)) }}::jsonb
            );
        end if;
    end
    $$;
    {%- else -%}
    {%- set build_id = build_id | int %}
    do $$
    begin
        perform 1 from builds.builds where build_id = {{ build_id }} and status = 'running' for update;
        if not found then
            raise exception 'build % is no longer running (cancelled): nothing is published', {{ build_id }};
        end if;
    end
    $$;
    update builds.builds
    set published_at = clock_timestamp(), published_models = {{ sql_string_literal(tojson(models)) }}::jsonb,
        row_counts = {{ sql_string_literal(tojson(row_counts)) }}::jsonb
    where build_id = {{ build_id }};
    {%- endif -%}
{%- endmacro %}

{# A unit test reads the column types of each input model from the database, at the input's place in
   the manifest, the staging schema. This is dbt-core 1.11's get_fixture_sql with one addition (between
   `sherliic:` and `/sherliic`): an input that this invocation does not build (`dbt test`, a partial
   build) is looked up in the live schema. tests/test_dbt_macros.py fails when the installed dbt-core's
   original differs from the copy without the addition (then redo the copy from the new original). #}
{% macro get_fixture_sql(rows, column_name_to_data_types) %}
-- Fixture for {{ model.name }}
{% set default_row = {} %}

{%- if not column_name_to_data_types -%}
{#-- Use defer_relation IFF it is available in the manifest and 'this' is missing from the database --#}
{%-   set this_or_defer_relation = defer_relation if (defer_relation and not load_relation(this)) else this -%}
{#-- sherliic: an input model that this invocation does not build is read where it is published --#}
{%-   if not load_relation(this_or_defer_relation) -%}
{%-     set this_or_defer_relation = this.incorporate(path={'schema': live_schema(this.schema)}) -%}
{%-   endif -%}
{#-- /sherliic --#}
{%-   set columns_in_relation = adapter.get_columns_in_relation(this_or_defer_relation) -%}

{%-   set column_name_to_data_types = {} -%}
{%-   set column_name_to_quoted = {} -%}
{%-   for column in columns_in_relation -%}

{#-- This needs to be a case-insensitive comparison --#}
{%-     do column_name_to_data_types.update({column.name|lower: column.data_type}) -%}
{%-     do column_name_to_quoted.update({column.name|lower: column.quoted}) -%}
{%-   endfor -%}
{%- endif -%}

{%- if not column_name_to_data_types -%}
    {{ exceptions.raise_compiler_error("Not able to get columns for unit test '" ~ model.name ~ "' from relation " ~ this ~ " because the relation doesn't exist") }}
{%- endif -%}

{%- for column_name, column_type in column_name_to_data_types.items() -%}
    {%- do default_row.update({column_name: (safe_cast("null", column_type) | trim )}) -%}
{%- endfor -%}

{{ validate_fixture_rows(rows, row_number) }}

{%- for row in rows -%}
{%-   set formatted_row = format_row(row, column_name_to_data_types) -%}
{%-   set default_row_copy = default_row.copy() -%}
{%-   do default_row_copy.update(formatted_row) -%}
select
{%-   for column_name, column_value in default_row_copy.items() %} {{ column_value }} as {{ column_name_to_quoted[column_name] }}{% if not loop.last -%}, {%- endif %}
{%-   endfor %}
{%-   if not loop.last %}
union all
{%    endif %}
{%- endfor -%}

{%- if (rows | length) == 0 -%}
    select
    {%- for column_name, column_value in default_row.items() %} {{ column_value }} as {{ column_name_to_quoted[column_name] }}{% if not loop.last -%},{%- endif %}
    {%- endfor %}
    limit 0
{%- endif -%}
{% endmacro %}
