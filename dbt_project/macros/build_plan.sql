{#
  The plan of a build: incremental or full (macros/incremental.sql describes incremental builds).

  int_build_plan (a model, built right after int_build_batches) decides once per build, and says why
  not incremental in one line: not a build on Postgres, --full-refresh, a partial build, no previous
  build in this schema, a partial last build, changed vars that the stored counts depend on or changed
  code of the models that keep state (incremental_blocker, before any data is read); then from the data:
  a removed batch, a new batch older than the last build's, new types for entities already in the graph,
  previous tables emptied by a crash. The state belongs to the schema it is published in: each build
  (schema) continues from its own previous tables.
#}

{# bump when the meaning of a stored column changes through a macro (a change to the SQL of a model
   that keeps state already makes the next build full: the fingerprint has a hash of their code) #}
{% macro incremental_state_version() -%}
{{ return('1') }}
{%- endmacro %}

{# The vars the stored tables depend on (thresholds applied only when scoring are recomputed from the
   stored counts in every build and are not part of it), and the code of the models that keep state #}
{% macro incremental_state_fingerprint() -%}
    {%- set parts = ['version=' ~ incremental_state_version()] -%}
    {%- for name in ['corpora', 'top_k_types', 'r_min', 'top_type', 'type_sources', 'map_types'] -%}
        {%- do parts.append(name ~ '=' ~ tojson(var(name))) -%}
    {%- endfor -%}
    {%- set code = [] -%}
    {%- for unique_id in incremental_state_models() | sort -%}
        {%- do code.append(graph.nodes[unique_id].raw_code) -%}
    {%- endfor -%}
    {%- do parts.append('models=' ~ local_md5(code | join('\n'))) -%}
    {{ return(parts | join(';')) }}
{%- endmacro %}

{# the models whose tables are the state of an incremental build (with the batch record and the plan):
   they must be built and published together #}
{% macro incremental_state_models() -%}
    {%- set names = [] -%}
    {%- if not execute -%}
        {{ return(names) }}
    {%- endif -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.package_name == project_name -%}
        {%- if node.config.materialized == 'incremental' or node.name in ['int_build_batches', 'int_build_plan'] -%}
            {%- do names.append(node.unique_id) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(names) }}
{%- endmacro %}

{# does this invocation build every model of the incremental state? #}
{% macro incremental_state_selected() -%}
    {%- if not execute -%}
        {{ return(false) }}
    {%- endif -%}
    {%- for unique_id in incremental_state_models() if unique_id not in selected_resources -%}
        {{ return(false) }}
    {%- endfor -%}
    {{ return(true) }}
{%- endmacro %}

{# Why this build cannot be incremental, from what is known before it reads any data ('' = it can);
   the data checks are int_build_plan's #}
{% macro incremental_blocker() -%}
    {%- if target.type != 'postgres' -%}
        {{ return('the ' ~ target.type ~ ' engine builds every model in full') }}
    {%- endif -%}
    {%- if not builds_into_staging() -%}
        {{ return('not a build') }}
    {%- endif -%}
    {%- if flags.FULL_REFRESH -%}
        {{ return('--full-refresh') }}
    {%- endif -%}
    {%- if not incremental_state_selected() -%}
        {{ return('a partial build rebuilds its models in full') }}
    {%- endif -%}
    {%- set missing = [] -%}
    {%- for unique_id in incremental_state_models() -%}
        {%- set node = graph.nodes[unique_id] -%}
        {%- set live = adapter.get_relation(database=node.database, schema=live_schema(node.schema), identifier=node.alias) -%}
        {%- if live is none or live.type != 'table' -%}
            {%- do missing.append(unique_id) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if missing | length == incremental_state_models() | length -%}
        {{ return('no previous build in schema ' ~ live_schema(model.schema)) }}
    {%- elif missing -%}
        {{ return('the last build was partial') }}
    {%- endif -%}
    {%- set plan_node = graph.nodes['model.' ~ project_name ~ '.int_build_plan'] -%}
    {%- set previous = run_query(
        'select state_fingerprint, state_complete from '
        ~ adapter.quote(live_schema(plan_node.schema)) ~ '.' ~ adapter.quote(plan_node.alias)
    ) -%}
    {%- if previous.rows | length == 0 -%}
        {#- a published plan has its row: an empty one was emptied by a crash (unlogged) -#}
        {{ return('the previous build\'s plan is empty: the server restarted after a crash, which empties the unlogged intermediate tables (or the build was a dbt run --empty)') }}
    {%- elif not previous.rows[0][1] -%}
        {{ return('the last build was partial') }}
    {%- endif -%}
    {%- set fingerprint = incremental_state_fingerprint() -%}
    {%- if previous.rows[0][0].split(';models=')[0] != fingerprint.split(';models=')[0] -%}
        {{ return('vars that the stored counts depend on changed since the last build') }}
    {%- elif previous.rows[0][0] != fingerprint -%}
        {{ return('the models that keep state changed since the last build') }}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{# The plan of this build (int_build_plan) as a dict: incremental (bool) and previous_max_batch_id.
   Full outside a build, in unit tests and before the plan is built. Its ref() also tells dbt that a
   model asking for the plan is built after int_build_plan. #}
{% macro build_plan() -%}
    {%- set plan = ref('int_build_plan') -%}
    {%- set full = {'incremental': false, 'previous_max_batch_id': 0} -%}
    {%- if not execute or model.resource_type != 'model' or not builds_into_staging() or target.type != 'postgres' -%}
        {{ return(full) }}
    {%- endif -%}
    {%- if plan.schema == live_schema(plan.schema) -%}
        {{ return(full) }}
    {%- endif -%}
    {%- set rows = run_query('select is_incremental, previous_max_batch_id from ' ~ plan).rows -%}
    {#- no row: `dbt run --empty` builds every model without rows -#}
    {%- if rows | length == 0 -%}
        {{ return(full) }}
    {%- endif -%}
    {{ return({'incremental': rows[0][0], 'previous_max_batch_id': rows[0][1] or 0}) }}
{%- endmacro %}

{# on-run-start: a build that selects some of the models that keep state but not all builds them in full
   (and int_build_plan, which says so otherwise, may not be among them); its record says so too #}
{% macro note_partial_build() -%}
    {%- if execute and builds_into_staging() and target.type == 'postgres' and not incremental_state_selected() -%}
        {%- set state = incremental_state_models() -%}
        {%- if state | select('in', selected_resources) | list -%}
            {%- set line = 'full build: a partial build rebuilds its models in full' -%}
            {{ log(line, info=true) }}
            {{ record_build_plan('false', line) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{# post-hook of int_build_plan: the one line that says how this build is built, in dbt's output and in
   the build's record (on Spark, which builds in place: that every model is built in full) #}
{% macro note_build_plan() -%}
    {%- if execute and (builds_into_staging() or (target.type != 'postgres' and flags.WHICH in ['run', 'build'])) -%}
        {%- set rows = run_query('select is_incremental, reason, n_new_batches from ' ~ this).rows -%}
        {%- set row = rows[0] if rows | length else [false, 'an empty build (dbt run --empty)', 0] -%}
        {%- if row[0] -%}
            {%- set line = 'incremental build: ' ~ row[2] ~ ' new batch(es) since the last build' -%}
        {%- else -%}
            {%- set line = 'full build: ' ~ row[1] -%}
        {%- endif -%}
        {#- a partial build: said by note_partial_build -#}
        {%- if row[0] or incremental_state_selected() or target.type != 'postgres' -%}
            {{ log(line, info=true) }}
        {%- endif -%}
        {{ record_build_plan('true' if row[0] else 'false', line) }}
    {%- endif -%}
{%- endmacro %}

{# The SQL that writes how the graph is built into this build's record (builds.builds.incremental and
   build_plan; Postgres builds, macros/build_records.sql); '' otherwise #}
{% macro record_build_plan(incremental, line) -%}
    {%- if execute and target.type == 'postgres' and builds_into_staging() -%}
    update builds.builds
    set incremental = {{ incremental }}, build_plan = {{ sql_string_literal(line) }}
    where dbt_invocation_id = {{ sql_string_literal(invocation_id) }}
    {%- endif -%}
{%- endmacro %}
