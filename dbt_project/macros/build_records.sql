{#
  Builds, named and recorded by the project itself, so that a plain `dbt run` is a build like a
  `sherliic-dbt run` (docs/design.md §2, "Builds"):

  - the dbt var `build` names it: null or 'default' is the default build (schema `warehouse`), NAME is
    built into schema `build_<NAME>` (generate_schema_name in atomic_publish.sql);
  - on-run-start (begin_build_record) writes its record in builds.builds (warehouse/schema/005_builds.sql:
    builds.begin_build), with every var, the loaded batches they select, and what the runner adds
    (sherliic-dbt: git commit, versions); a running build of the same schema refuses it;
  - on-run-end (publish_staging_schemas) finishes the record inside the transaction that publishes the
    marts, or records why nothing was published (finish_failed_build).

  A record belongs to one dbt invocation (its invocation_id). What sherliic-dbt adds comes in the
  environment variable SHERLIIC_BUILD_CONTEXT (JSON), read only while the hooks run, so that its new value
  per build never makes dbt parse the project again.
#}

{# A build name: lowercase letters and digits in words joined by single underscores, at most 40
   characters (warehouse.target.BUILD_NAME): `build_<name>` then never ends in `__next`, the suffix of a
   staging schema, so no two builds' schemas can collide. #}
{% macro build_name() -%}
    {%- set name = var('build', none) -%}
    {%- if name is none or name == 'default' -%}
        {{ return('default') }}
    {%- endif -%}
    {%- if name is not string or not modules.re.fullmatch('[a-z][a-z0-9]*(_[a-z0-9]+)*', name) or name | length > 40 -%}
        {{ exceptions.raise_compiler_error(
            "dbt var build = " ~ tojson(name) ~ ": a build name is lowercase letters and digits, words "
            ~ "joined by single '_', starting with a letter, at most 40 characters (null or 'default': the "
            ~ "default build)"
        ) }}
    {%- endif -%}
    {{ return(name) }}
{%- endmacro %}

{# the live schema of the build's marts #}
{% macro build_schema() -%}
    {%- set name = build_name() -%}
    {{ return('warehouse' if name == 'default' else 'build_' ~ name) }}
{%- endmacro %}

{# SHERLIIC_BUILD_CONTEXT: what sherliic-dbt adds to the record ({} for plain dbt) #}
{% macro runner_context() -%}
    {{ return(fromjson(env_var('SHERLIIC_BUILD_CONTEXT', '{}')) if execute else {}) }}
{%- endmacro %}

{# The declared vars (dbt_project.yml) with this invocation's values; tests/test_plain_dbt.py keeps
   the list equal to dbt_project.yml's. #}
{% macro resolved_vars() -%}
    {%- set names = [
        'top_k_types', 'r_min', 'min_relv', 'min_sigma', 'min_esr', 'top_n_premises', 'corpora', 'build',
        'top_type', 'type_sources', 'map_types', 'work_mem', 'publish_timeout', 'annotation_min_judgements',
        'annotation_max_incomprehensible', 'annotation_min_trust', 'annotation_dev_share',
        'annotation_split_seed', 'docs_catalog',
    ] -%}
    {%- set resolved = {} -%}
    {%- for name in names -%}
        {%- do resolved.update({name: var(name)}) -%}
    {%- endfor -%}
    {{ return(resolved) }}
{%- endmacro %}

{# `run --select tag:teg --vars {...}` for a record, from dbt's own view of the invocation #}
{% macro invocation_command() -%}
    {%- set args = invocation_args_dict -%}
    {%- set parts = [flags.WHICH] -%}
    {%- for option in ['select', 'exclude', 'selector'] if args.get(option) -%}
        {%- set value = args[option] -%}
        {%- do parts.append('--' ~ option ~ ' ' ~ (value | join(' ') if value is not string else value)) -%}
    {%- endfor -%}
    {%- if args.get('full_refresh') -%}{%- do parts.append('--full-refresh') -%}{%- endif -%}
    {%- if args.get('vars') and args['vars'] != '{}' -%}
        {%- do parts.append('--vars ' ~ (args['vars'] if args['vars'] is string else tojson(args['vars']))) -%}
    {%- endif -%}
    {{ return(parts | join(' ')) }}
{%- endmacro %}

{# on-run-start, after validate_vars: this build's record (Postgres builds only) #}
{% macro begin_build_record() -%}
    {%- if not builds_into_staging() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set versions = {'dbt-core': dbt_version} -%}
    {%- set retried = retried_build_id() -%}
    {%- if is_retry() and retried is none %}
    do $$ begin raise exception 'dbt retry: no failed build of schema % kept its models for a retry (a later build emptied its staging schema): run the whole build again', {{ sql_string_literal(build_schema()) }}; end $$;
    {%- endif %}
    begin;
    do $$
    begin
        if to_regprocedure('builds.begin_build(text, text, text, text, jsonb, text, jsonb, jsonb, bigint)') is null then
            raise exception 'the build records of database % are older than this checkout: run `sherliic-db init` (or `make db-start`) once, then build again', current_database();
        end if;
    end
    $$;
    select builds.begin_build(
        {{ sql_string_literal(build_name()) }},
        {{ sql_string_literal(build_schema()) }},
        {{ sql_string_literal(target.type) }},
        {{ sql_string_literal(invocation_command()) }},
        {{ sql_string_literal(tojson(resolved_vars())) }}::jsonb,
        {{ sql_string_literal(invocation_id) }},
        {{ sql_string_literal(tojson(runner_context())) }}::jsonb,
        {{ sql_string_literal(tojson(versions)) }}::jsonb || jsonb_build_object('postgres', current_setting('server_version')),
        {{ retried or 'null' }}
    );
    commit;
{%- endmacro %}

{# This invocation's record: (build_id, status), or none when it has none (not a build, or refused at
   start) #}
{% macro this_build_record() -%}
    {%- if not execute or target.type != 'postgres' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set rows = run_query(
        'select build_id, status from builds.builds where dbt_invocation_id = ' ~ sql_string_literal(invocation_id)
    ).rows if adapter.get_relation(database=target.database, schema='builds', identifier='builds') else [] -%}
    {{ return(rows[0] if rows | length else none) }}
{%- endmacro %}

{# The failed build that `dbt retry` resumes: the latest record of this schema that failed with models
   left in its staging schema (none outside a retry) #}
{% macro retried_build_id() -%}
    {%- if not execute or not is_retry() -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set rows = run_query(
        "select build_id from builds.builds where schema_name = " ~ sql_string_literal(build_schema())
        ~ " and status in ('failed', 'cancelled') and staged_models is not null order by build_id desc limit 1"
    ).rows -%}
    {{ return(rows[0][0] if rows | length else none) }}
{%- endmacro %}

{# The models a failed build left in its staging schema for `dbt retry`: its own successful models and,
   for a retry, those its failed build had left #}
{% macro staged_models(results) -%}
    {%- set staged = [] -%}
    {%- for result in results
        if result.node.resource_type in ['model', 'seed'] and result.status in ['success', 'pass', 'warn'] -%}
        {%- do staged.append(result.node.unique_id) -%}
    {%- endfor -%}
    {%- for unique_id in previously_staged_models() if unique_id not in staged -%}
        {%- do staged.append(unique_id) -%}
    {%- endfor -%}
    {{ return(staged) }}
{%- endmacro %}

{# the models that the failed build this retry resumes had left in staging (its record took the list over
   when it began; [] outside a retry) #}
{% macro previously_staged_models() -%}
    {%- if not execute or not is_retry() -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set rows = run_query(
        'select staged_models from builds.builds where dbt_invocation_id = ' ~ sql_string_literal(invocation_id)
    ).rows -%}
    {%- set staged = rows[0][0] if rows | length else none -%}
    {{ return(fromjson(staged) if staged is string else (staged or [])) }}
{%- endmacro %}

{# Why a build did not publish, from dbt's results: the first node that failed, with the first lines of
   its message (the cause, not only "Database Error in model ...") #}
{% macro build_error(results) -%}
    {%- for result in results if result.status not in ['success', 'pass', 'warn', 'skipped'] -%}
        {%- set lines = [] -%}
        {%- for line in (result.message or result.status | string).split('\n') if line | trim -%}
            {%- do lines.append(line | trim) -%}
        {%- endfor -%}
        {%- set what = result.node.resource_type ~ ' ' ~ result.node.name -%}
        {{ return((what ~ ': ' ~ lines[:3] | join(' '))[:500]) }}
    {%- endfor -%}
    {{ return('stopped before it could publish') }}
{%- endmacro %}

{# on-run-end of a build that does not publish (a node failed): the record says why, and which models
   its staging schema keeps for `dbt retry` #}
{% macro finish_failed_build(build_id, results) -%}
    begin;
    select builds.finish_failed(
        {{ build_id }},
        {{ sql_string_literal(build_error(results)) }},
        {{ sql_string_literal(tojson(staged_models(results))) }}::jsonb
    );
    commit;
{%- endmacro %}

{# After a build that published 0 inference candidates: the step that removed the last ones (mart
   candidate_funnel), the var that controls it, a value that lets candidates through, and the command that
   rebuilds the build with it and every other var the build was given. Logged for plain dbt (sherliic-dbt
   prints it from the record), stored in the record. #}
{% macro zero_candidates_hint(build_id) -%}
    {%- set schema = build_schema() -%}
    {#- published a moment ago, behind the back of dbt's relation cache: asked of the database -#}
    {%- set funnel = adapter.quote(schema) ~ '.candidate_funnel' -%}
    {%- if run_query('select to_regclass(' ~ sql_string_literal(funnel) ~ ')').rows[0][0] is none -%}
        {{ return('') }}
    {%- endif -%}
    {%- set steps = run_query(
        'select step, counted, n_rows, var_name, var_value, passing_value from ' ~ funnel ~ ' order by step_number'
    ).rows -%}
    {%- set ns = namespace(previous=none, hint='') -%}
    {%- for step, counted, n_rows, var_name, var_value, passing_value in steps if not ns.hint -%}
        {%- if n_rows == 0 -%}
            {%- set before = '' if ns.previous is none else ' (' ~ '{:,}'.format(ns.previous[1]) ~ ' ' ~ ns.previous[0] ~ ' before it)' -%}
            {%- set advice = {
                'corpora': 'select corpora with relation instances, or load one (sherliic-extract corpus)',
                'r_min': 'lower r_min', 'type_sources': 'widen type_sources (null: every source) or set map_types',
                'min_relv': 'lower min_relv', 'min_sigma': 'lower min_sigma', 'min_esr': 'lower min_esr',
                'top_n_premises': 'raise top_n_premises',
            }.get(var_name, 'change ' ~ var_name) -%}
            {%- set line = '0 inference candidates: step ' ~ step ~ ' left no ' ~ counted ~ before
                ~ '; dbt var ' ~ var_name ~ ' = ' ~ var_value ~ ': ' ~ advice -%}
            {%- if passing_value is not none -%}
                {%- set value = passing_value | int if var_name == 'r_min' else passing_value | float -%}
                {%- set line = line ~ ': ' ~ value ~ ' lets some through, e.g. ' ~ rebuild_command({var_name: value}) -%}
            {%- else -%}
                {%- set line = line ~ ', e.g. ' ~ rebuild_command({var_name: '...'}) -%}
            {%- endif -%}
            {%- set ns.hint = line ~ ' (mart ' ~ schema ~ '.candidate_funnel has every step)' -%}
        {%- endif -%}
        {%- set ns.previous = (counted, n_rows) -%}
    {%- endfor -%}
    {{ return(ns.hint) }}
{%- endmacro %}

{# The command that rebuilds this build with `changes`: every var the build was given that differs from
   the default (its corpora included) stays, in the runner's own spelling #}
{% macro rebuild_command(changes) -%}
    {%- set given = invocation_args_dict.get('vars') or {} -%}
    {%- set given = fromyaml(given) if given is string else given -%}
    {%- set kept = {} -%}
    {%- for name, value in given.items() if name != 'build' -%}
        {%- do kept.update({name: value}) -%}
    {%- endfor -%}
    {%- do kept.update(changes) -%}
    {%- set parts = [] -%}
    {%- for name, value in kept.items() -%}
        {%- do parts.append(name ~ ': ' ~ (value if value == '...' else tojson(value))) -%}
    {%- endfor -%}
    {%- set vars_text = '{' ~ parts | join(', ') ~ '}' -%}
    {%- if runner_context().get('runner') == 'sherliic-dbt' -%}
        {%- set named = '' if build_name() == 'default' else ' --build ' ~ build_name() -%}
        {{ return('sherliic-dbt ' ~ flags.WHICH ~ named ~ " --vars '" ~ vars_text ~ "'") }}
    {%- endif -%}
    {%- set named = '' if build_name() == 'default' else 'build: ' ~ build_name() ~ ', ' -%}
    {{ return('dbt ' ~ flags.WHICH ~ " --vars '{" ~ named ~ vars_text[1:] ~ "'") }}
{%- endmacro %}

{# on-run-end, after the publish: a build that published 0 inference candidates gets the hint in its
   record (sherliic-dbt prints it) and, for plain dbt, in dbt's output #}
{% macro note_zero_candidates() -%}
    {%- set record = this_build_record() if builds_into_staging() else none -%}
    {%- if record is none or record[1] != 'succeeded' -%}
        {{ return('') }}
    {%- endif -%}
    {%- set rows = run_query(
        "select (row_counts ->> 'inference_candidates')::bigint from builds.builds where build_id = " ~ record[0]
    ).rows -%}
    {%- if not rows or rows[0][0] != 0 -%}
        {{ return('') }}
    {%- endif -%}
    {%- set hint = zero_candidates_hint(record[0]) -%}
    {%- if not hint -%}
        {{ return('') }}
    {%- endif -%}
    {%- if runner_context().get('runner') != 'sherliic-dbt' -%}
        {{ log('hint: ' ~ hint, info=true) }}
    {%- endif -%}
    update builds.builds set hint = {{ sql_string_literal(hint) }} where build_id = {{ record[0] }}
{%- endmacro %}
