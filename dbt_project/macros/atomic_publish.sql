{#
  Atomic publication of a build (Postgres): a reader sees the previous marts or the new ones, never a
  mix of both. The live schema is the build's (macros/build_records.sql: `warehouse` for the default
  build, `build_<name>` for the dbt var build = NAME).

  - generate_schema_name puts every model into a staging schema, `<schema>__next` (warehouse__next);
  - ref() points at the staging schema only for models this invocation builds (dbt run/build and
    selected; in `dbt retry` also those its failed build left in staging); every other model is read
    where readers read it, in the live schema, so partial builds (`--select tag:annotation`) and `dbt
    test` work on the live warehouse;
  - on-run-start (prepare_staging_schemas) empties the staging schema left by an earlier build (not in
    `dbt retry`, which resumes it);
  - on-run-end (publish_staging_schemas) moves what the build made into the live schema in one
    transaction, and only when every node of the invocation succeeded (models and, in `dbt build`,
    their tests); the build's record is claimed first (it must still be running: sherliic-dbt marks a
    build it stops cancelled) and finished last, in that transaction. Otherwise the record says why, and
    the staging schema stays for `dbt retry`; the live marts stay as they were.

  The move is `drop <old>; alter table <new> set schema <live>` per model. Readers are never broken by
  it and never break it: the transaction first takes every lock it needs at once, without waiting
  (NOWAIT), and when a reader holds one it lets go of all of them, waits a moment and tries again, for
  at most the dbt var publish_timeout; it then never waits while holding a lock, so it cannot deadlock
  with a reader that holds several (an export's snapshot). Readers already inside a query finish on
  the old tables; views keep pointing at the tables they were built on (Postgres binds views by OID).

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
    {%- set live = build_schema() ~ ('_' ~ custom_schema_name | trim if custom_schema_name else '') -%}
    {%- if node.resource_type in ['model', 'seed'] and not var('docs_catalog', false) -%}
        {{ live ~ staging_schema_suffix() }}
    {%- else -%}
        {{ live }}
    {%- endif -%}
{%- endmacro %}

{# does this invocation build models (and publish them at the end)? `dbt retry` runs as the command it
   retries #}
{% macro builds_into_staging() -%}
{{ return(execute and flags.WHICH in ['run', 'build', 'seed'] and staging_schema_suffix() != '') }}
{%- endmacro %}

{# is this invocation `dbt retry` (the first word of the command line that names a dbt command)? #}
{% macro is_retry() -%}
    {%- set commands = ['build', 'run', 'seed', 'test', 'retry', 'compile', 'show', 'ls', 'list', 'docs',
        'debug', 'parse', 'clone', 'snapshot', 'source', 'run-operation', 'deps', 'clean', 'init'] -%}
    {%- for word in (flags.INVOCATION_COMMAND or '').split()[1:] if word in commands -%}
        {{ return(word == 'retry') }}
    {%- endfor -%}
    {{ return(false) }}
{%- endmacro %}

{# Is this node built by this invocation (then it is read from the staging schema)? A selected model or
   seed, or in `dbt retry` one its failed build left in the staging schema. #}
{% macro built_in_this_build(unique_id) -%}
    {%- if not builds_into_staging() -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if unique_id in selected_resources -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set node = graph.nodes.get(unique_id) -%}
    {{ return(is_retry() and node is not none and adapter.get_relation(
        database=node.database, schema=node.schema, identifier=node.alias) is not none) }}
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
        {%- set built_here = built_in_this_build('model.' ~ package_name ~ '.' ~ model_name)
            or built_in_this_build('seed.' ~ package_name ~ '.' ~ model_name) -%}
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

{# on-run-start: the staging schema left by an earlier build is emptied (through the adapter, so that
   dbt's relation cache forgets the old contents too); `dbt retry` resumes it instead #}
{% macro prepare_staging_schemas() -%}
    {%- if builds_into_staging() and not is_retry() -%}
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

{# on-run-end: the SQL that publishes the build (every node succeeded) or records why it did not. An
   invocation without a record of its own (not a build, or refused when it started) touches nothing. #}
{% macro publish_staging_schemas(results) -%}
    {%- if not builds_into_staging() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set record = this_build_record() -%}
    {%- if record is none -%}
        {{ return('') }}
    {%- endif -%}
    {%- set build_id = record[0] -%}
    {%- set succeeded = ['success', 'pass', 'warn'] -%}
    {%- if results | rejectattr('status', 'in', succeeded) | list -%}
        {{ return(finish_failed_build(build_id, results)) }}
    {%- elif record[1] != 'running' -%}
        {#- every node succeeded, but the build was stopped (sherliic-dbt marked it cancelled): dbt's exit
            code must say that nothing was published -#}
        {{ return(finish_failed_build(build_id, results) ~ '\nselect builds.assert_published(' ~ build_id ~ ');') }}
    {%- endif -%}
    {%- set built = results | selectattr('node.resource_type', 'in', ['model', 'seed']) | map(attribute='node') | list -%}
    {%- set built_ids = built | map(attribute='unique_id') | list -%}
    {%- for unique_id in previously_staged_models() if unique_id not in built_ids -%}
        {%- do built.append(graph.nodes[unique_id]) -%}
    {%- endfor -%}
    {{ return(publish_sql(build_id, built, created_mart_rows(results))) }}
{%- endmacro %}

{# The one transaction that publishes `built` (graph nodes) and finishes the record #}
{% macro publish_sql(build_id, built, created_rows) -%}
    {%- set updated = [] -%}
    {%- set replaced = [] -%}
    {%- for node in built -%}
        {%- set delta = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias ~ '__delta') -%}
        {%- do (updated if delta is not none else replaced).append(node) -%}
    {%- endfor -%}
    {%- set live_schemas = [] -%}
    {%- for node in built if live_schema(node.schema) not in live_schemas -%}
        {%- do live_schemas.append(live_schema(node.schema)) -%}
    {%- endfor -%}
    {#- the plan: the tables of an incremental build must come from one build, so when some of them are
        published without the plan that records their batches, the next build starts from scratch -#}
    {%- set state = incremental_state_models() -%}
    {%- set published = built | map(attribute='unique_id') | list -%}
    {%- set plan_node = graph.nodes['model.' ~ project_name ~ '.int_build_plan'] -%}
    {%- set stale_plan = none -%}
    {%- if published | select('in', state) | list and plan_node.unique_id not in published -%}
        {%- set stale_plan = adapter.get_relation(database=plan_node.database, schema=live_schema(plan_node.schema), identifier=plan_node.alias) -%}
    {%- endif -%}
    {#- every relation the transaction drops, moves or updates: locked at once, without waiting -#}
    {%- set locked = [] -%}
    {%- for node in built -%}
        {%- set old = adapter.get_relation(database=node.database, schema=live_schema(node.schema), identifier=node.alias) -%}
        {%- if old is not none -%}{%- do locked.append(old) -%}{%- endif -%}
    {%- endfor -%}
    {%- if stale_plan is not none -%}{%- do locked.append(stale_plan) -%}{%- endif -%}
    {%- set counted = [] -%}
    {%- for node in built if node.fqn[1] == 'marts' and node.alias not in created_rows -%}
        {%- do counted.append(node) -%}
    {%- endfor -%}
    {{ log_waiting_readers(locked) }}
    begin;
    do $publish$
    begin
        {#- readers first: every relation the transaction drops or updates, locked without waiting on
            any reader while holding another (builds.lock_for_publish); then the record, which must
            still be running -#}
        {%- if locked %}
        perform builds.lock_for_publish(
            {{ build_id }},
            {{ sql_string_literal(tojson(locked | map('string') | list)) }}::jsonb,
            {{ sql_string_literal(var('publish_timeout')) }}::interval
        );
        {%- endif %}
        perform builds.claim_for_publish({{ build_id }});
        {%- for live in live_schemas %}
        create schema if not exists {{ adapter.quote(live) }};
        {%- endfor %}
        {%- if updated %}
        {#- applying the deltas hashes their keys: room for them (Postgres' default is 4MB) #}
        perform set_config('work_mem', {{ sql_string_literal(var('work_mem')) }}, true);
        {%- endif %}
        {#- deltas first: their conditions read staging tables that are moved below -#}
        {%- for node in updated %}
            {%- set live = api.Relation.create(database=node.database, schema=live_schema(node.schema), identifier=node.alias) -%}
            {%- set delta = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias ~ '__delta') -%}
            {%- set unique_key = node.config.unique_key -%}
            {%- set unique_key = [unique_key] if unique_key is string else unique_key %}
        delete from {{ live }}
        where {{ replaced_rows_condition(delta, unique_key, node.config.get('reset_relations_on', [])) }};
        insert into {{ live }} select * from {{ delta }};
        {%- endfor %}
        {#- old relations dependents first (results are in build order): an old view must go before
            the relations it reads; one that this build does not replace makes the drop fail (no
            cascade), and then nothing is published -#}
        {%- for node in replaced | reverse %}
            {%- set old = adapter.get_relation(database=node.database, schema=live_schema(node.schema), identifier=node.alias) -%}
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
        {%- if stale_plan is not none %}
        drop table {{ stale_plan }};
        {%- endif %}
        {%- for schema in staging_schemas() %}
        drop schema if exists {{ adapter.quote(schema) }} cascade;
        {%- endfor %}
        perform builds.finish_published(
            {{ build_id }},
            {{ sql_string_literal(tojson(built | map(attribute='alias') | list)) }}::jsonb,
            {{ sql_string_literal(tojson(created_rows)) }}::jsonb
            {%- for node in counted %}
            || jsonb_build_object({{ sql_string_literal(node.alias) }}, (select count(*) from {{ adapter.quote(live_schema(node.schema)) }}.{{ adapter.quote(node.alias) }}))
            {%- endfor %}
        );
    exception when others then
        {# nothing of the above happened; the record says why (a cancelled build stays cancelled), the
           staging schema stays for `dbt retry` #}
        perform builds.finish_failed(
            {{ build_id }}, 'publish: ' || sqlerrm,
            {{ sql_string_literal(tojson(published)) }}::jsonb
        );
    end
    $publish$;
    commit;
    {#- dbt's exit code says what the record says -#}
    select builds.assert_published({{ build_id }});
{%- endmacro %}

{# one line in dbt's output when readers hold the marts the publish replaces (it waits for them) #}
{% macro log_waiting_readers(relations) -%}
    {%- if relations -%}
        {%- set rows = run_query(
            'select builds.lock_holders(' ~ sql_string_literal(tojson(relations | map('string') | list)) ~ '::jsonb)'
        ).rows -%}
        {%- if rows and rows[0][0] -%}
            {{ log('publishing waits for readers of the marts: ' ~ rows[0][0], info=true) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{# The rows of the marts this build created with CREATE TABLE AS, as dbt reported them ('SELECT n'): the
   build record's row counts without a count(*) after the build. That count was the first read of the
   new tables, so it set the hint bits of every page, and with data checksums each page then wrote a full
   page image to the WAL (1.1 GB and 4.3 s for `teg_edges` at 5M instances). Marts updated from a delta,
   and views, are counted in the publishing transaction. #}
{% macro created_mart_rows(results) -%}
    {%- set counts = {} -%}
    {%- for result in results
        if result.node.resource_type == 'model' and result.node.fqn[1] == 'marts'
        and (result.adapter_response or {}).get('code') == 'SELECT' -%}
        {%- do counts.update({result.node.alias: result.adapter_response.get('rows_affected')}) -%}
    {%- endfor -%}
    {{ return(counts) }}
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
