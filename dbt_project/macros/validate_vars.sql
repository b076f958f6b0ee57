{#
  validate_vars: the on-run-start hook that checks every var of dbt_project.yml before any model runs.
  A bad value stops the invocation with one line naming the var, the value and what is allowed: the
  error is raised while dbt renders the hook, which aborts the run (a hook whose SQL fails would not:
  dbt still runs the models then).
#}

{% macro validate_vars() -%}
    {%- set checks = [
        ('top_k_types', 'integer', 1, 8, 'an integer from 1 to 8 (k² type pairs are bits of a bigint)'),
        ('r_min', 'integer', 1, none, 'an integer ≥ 1'),
        ('min_relv', 'number', 0, none, 'a number ≥ 0'),
        ('min_sigma', 'number', none, none, 'a finite number'),
        ('min_esr', 'number', 0, 1, 'a number from 0 to 1'),
        ('top_n_premises', 'integer', 1, none, 'an integer ≥ 1'),
        ('annotation_min_judgements', 'integer', 1, none, 'an integer ≥ 1'),
        ('annotation_max_incomprehensible', 'integer', 0, none, 'an integer ≥ 0'),
        ('annotation_min_trust', 'number', 0, 1, 'a number from 0 to 1'),
        ('annotation_dev_share', 'number', 0, 1, 'a number from 0 to 1'),
    ] -%}
    {%- for name, kind, low, high, allowed in checks -%}
        {%- set value = var(name) -%}
        {%- set is_integer = value is integer -%}
        {#- `is number` holds for booleans too; value - value is 0 only for finite numbers (not nan/inf) -#}
        {%- set is_number = (is_integer or value is float) and value - value == 0 -%}
        {%- set typed = is_integer if kind == 'integer' else is_number -%}
        {%- if not typed or (low is not none and value < low) or (high is not none and value > high) -%}
            {{ sherliic_var_error(name, value, allowed) }}
        {%- endif -%}
    {%- endfor -%}

    {%- for name in ['top_type', 'annotation_split_seed'] -%}
        {%- set value = var(name) -%}
        {%- if value is not string or value | trim == '' -%}
            {{ sherliic_var_error(name, value, 'a non-empty string') }}
        {%- endif -%}
    {%- endfor -%}

    {%- set sources = var('type_sources') -%}
    {%- set source_list = [sources] if sources is string else sources -%}
    {%- if sources is not none and (
        source_list is string or source_list is mapping or source_list is not iterable
        or source_list | length == 0
        or source_list | reject('string') | list | length > 0
        or source_list | map('trim') | select('equalto', '') | list | length > 0
    ) -%}
        {{ sherliic_var_error('type_sources', sources, 'null (every source) or a non-empty list of non-empty strings') }}
    {%- endif -%}

    {{- validate_corpora() -}}
    {{- validate_type_sources() -}}

    {%- if var('map_types') is not sameas true and var('map_types') is not sameas false -%}
        {{ sherliic_var_error('map_types', var('map_types'), 'true or false') }}
    {%- endif -%}

    {#- pasted into `set local work_mem = '...'`: a Postgres memory size, nothing else -#}
    {%- set work_mem = var('work_mem') -%}
    {%- if work_mem is not string or not modules.re.fullmatch('[1-9][0-9]{0,8}(kB|MB|GB|TB)', work_mem) -%}
        {{ sherliic_var_error('work_mem', work_mem, "a Postgres memory size such as '256MB' (digits, then kB, MB, GB or TB)") }}
    {%- endif -%}

    {%- if var('docs_catalog') is not sameas true and var('docs_catalog') is not sameas false -%}
        {{ sherliic_var_error('docs_catalog', var('docs_catalog'), 'true or false') }}
    {%- endif -%}
    {%- if var('docs_catalog') and flags.WHICH in ['run', 'build', 'seed'] -%}
        {{ exceptions.raise_compiler_error(
            "dbt var docs_catalog is for `dbt docs generate` only (make dbt-docs): a build with it would "
            ~ "write into the live schemas instead of publishing atomically"
        ) }}
    {%- endif -%}

    {%- set timeout = var('publish_timeout') -%}
    {%- if timeout is not string or not modules.re.fullmatch('[1-9][0-9]{0,5} ?(s|sec|seconds?|min|minutes?|h|hours?)', timeout) -%}
        {{ sherliic_var_error('publish_timeout', timeout, "a duration such as '10 minutes' (digits, then s, min or h)") }}
    {%- endif -%}

    {#- the build's name (build_name raises on a bad one); Spark builds in place, so only the default build -#}
    {%- if build_name() != 'default' and target.type != 'postgres' -%}
        {{ exceptions.raise_compiler_error(
            "named builds (build " ~ build_name() ~ ") need the postgres engine: on " ~ target.type ~ " models are "
            ~ "built in place, so a failed build could not be kept from replacing a good one (docs/design.md §2)"
        ) }}
    {%- endif -%}

    {#- a misspelt var would otherwise be ignored silently -#}
    {%- set given = invocation_args_dict.get('vars') or {} -%}
    {%- set given = fromyaml(given) if given is string else given -%}
    {%- set known = resolved_vars().keys() | list -%}
    {%- for name in given if name not in known -%}
        {{ exceptions.raise_compiler_error(
            "unknown dbt var '" ~ name ~ "': the vars: " ~ known | sort | join(', ')
            ~ " (dbt_project/dbt_project.yml declares every var)"
        ) }}
    {%- endfor -%}
{%- endmacro %}

{% macro sherliic_var_error(name, value, allowed) -%}
    {{ exceptions.raise_compiler_error(
        "invalid dbt var " ~ name ~ " = " ~ (tojson(value) or value | string) ~ ": must be " ~ allowed
    ) }}
{%- endmacro %}

{#
  corpora: null, a corpus name or a non-empty list of them, each the name of a loaded corpus (a typo
  would otherwise build an empty graph). The loaded corpora are read only when the var is set.
#}
{% macro validate_corpora() -%}
    {%- set corpora = var('corpora') -%}
    {%- if corpora is none -%}
        {{ return('') }}
    {%- endif -%}
    {%- set names = [corpora] if corpora is string else corpora -%}
    {%- if names is string or names is mapping or names is not iterable
        or names | length == 0
        or names | reject('string') | list | length > 0
        or names | map('trim') | select('equalto', '') | list | length > 0 -%}
        {{ sherliic_var_error('corpora', corpora, 'null (every corpus) or a non-empty list of corpus names') }}
    {%- endif -%}
    {%- if execute -%}
        {%- set loaded_query -%}
            select distinct corpus_name
            from {{ source('extract', 'load_batches') }}
            where kind = 'corpus' and status = 'loaded' and corpus_name is not null
            order by corpus_name
        {%- endset -%}
        {%- set loaded = run_query(loaded_query).columns[0].values() | list -%}
        {%- set unknown = names | reject('in', loaded) | list -%}
        {%- if unknown -%}
            {{ sherliic_var_error(
                'corpora', corpora,
                'names of loaded corpora; not loaded: ' ~ unknown | join(', ')
                ~ ' (loaded: ' ~ (loaded | join(', ') or 'none') ~ '; sherliic-extract batches lists them)'
            ) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#
  type_sources: each name must be a type source of the loaded batches the build reads (type tables,
  and the NER or inline types of the selected corpora): a typo would otherwise build an untyped graph.
  Read only when the var is set (the check scans raw.entity_types).
#}
{% macro validate_type_sources() -%}
    {%- set sources = var('type_sources') -%}
    {%- if sources is none or not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set names = [sources] if sources is string else sources -%}
    {%- set loaded_query -%}
        select distinct types.type_source
        from {{ source('extract', 'entity_types') }} as types
        inner join {{ source('extract', 'load_batches') }} as batches
            on types.batch_id = batches.batch_id
        where batches.status = 'loaded'
            and {{ selected_corpora_filter('batches.kind', 'batches.corpus_name') }}
        order by 1
    {%- endset -%}
    {%- set loaded = run_query(loaded_query).columns[0].values() | list -%}
    {%- set unknown = names | reject('in', loaded) | list -%}
    {%- if unknown -%}
        {{ sherliic_var_error(
            'type_sources', sources,
            'type sources of the loaded batches; not loaded: ' ~ unknown | join(', ')
            ~ ' (loaded: ' ~ (loaded | join(', ') or 'none') ~ ')'
        ) }}
    {%- endif -%}
{%- endmacro %}
