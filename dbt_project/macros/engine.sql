{#
  Engine-specific SQL, behind adapter.dispatch so the models stay portable (default = Postgres;
  a spark__ variant can be added without touching the models).
#}

{# sorted, de-duplicated array of a text expression (an aggregate) #}
{% macro sorted_set_agg(expr) -%}
{{ return(adapter.dispatch('sorted_set_agg', 'sherliic')(expr)) }}
{%- endmacro %}
{% macro default__sorted_set_agg(expr) -%}
array_agg(distinct {{ expr }} order by {{ expr }})
{%- endmacro %}
{% macro spark__sorted_set_agg(expr) -%}
array_sort(collect_set({{ expr }}))
{%- endmacro %}

{# empty text array literal #}
{% macro empty_text_array() -%}
{{ return(adapter.dispatch('empty_text_array', 'sherliic')()) }}
{%- endmacro %}
{% macro default__empty_text_array() -%}
cast(array[] as text[])
{%- endmacro %}
{% macro spark__empty_text_array() -%}
cast(array() as array<string>)
{%- endmacro %}

{# one-element text array #}
{% macro text_array(expr) -%}
{{ return(adapter.dispatch('text_array', 'sherliic')(expr)) }}
{%- endmacro %}
{% macro default__text_array(expr) -%}
array[cast({{ expr }} as text)]
{%- endmacro %}
{% macro spark__text_array(expr) -%}
array(cast({{ expr }} as string))
{%- endmacro %}

{# do two arrays share an element? #}
{% macro arrays_overlap(a, b) -%}
{{ return(adapter.dispatch('arrays_overlap', 'sherliic')(a, b)) }}
{%- endmacro %}
{% macro default__arrays_overlap(a, b) -%}
({{ a }} && {{ b }})
{%- endmacro %}
{% macro spark__arrays_overlap(a, b) -%}
arrays_overlap({{ a }}, {{ b }})
{%- endmacro %}

{# does the array contain the value? #}
{% macro array_has(arr, value) -%}
{{ return(adapter.dispatch('array_has', 'sherliic')(arr, value)) }}
{%- endmacro %}
{% macro default__array_has(arr, value) -%}
({{ value }} = any({{ arr }}))
{%- endmacro %}
{% macro spark__array_has(arr, value) -%}
array_contains({{ arr }}, {{ value }})
{%- endmacro %}

{# n-th element of a `___`-separated path; n is 1-based, negative counts from the end #}
{% macro path_element(path, n) -%}
{{ return(adapter.dispatch('path_element', 'sherliic')(path, n)) }}
{%- endmacro %}
{% macro default__path_element(path, n) -%}
split_part({{ path }}, '___', {{ n }})
{%- endmacro %}
{# try_: null past either end in ANSI mode too (Spark 4's default, and its Thrift server's, where
   element_at fails with INVALID_ARRAY_INDEX_IN_ELEMENT_AT) #}
{% macro spark__path_element(path, n) -%}
try_element_at(split({{ path }}, '___'), {{ n }})
{%- endmacro %}

{# label without the `^-` (walked upwards) suffix #}
{% macro strip_up_marker(label) -%}
replace({{ label }}, '^-', '')
{%- endmacro %}

{# planner settings for heavy models (pre-hook, inside the model's transaction: SET LOCAL ends with
   it, so nothing leaks into later models on the same dbt thread); no-op on other engines.
   - work_mem: Postgres' default (4MB) makes hash joins / aggregates over millions of rows spill to
     temp files in many batches.
   - no merge or nested-loop joins: these models join freshly built tables on several correlated
     keys, where the planner underestimates row counts by orders of magnitude and picked nested
     loops and re-sorted merge joins (100M+ rows) that hash joins do in seconds. #}
{% macro heavy_model_settings() -%}
{{ return(adapter.dispatch('heavy_model_settings', 'sherliic')()) }}
{%- endmacro %}
{% macro default__heavy_model_settings() -%}
set local work_mem = {{ sql_string_literal(var('work_mem')) }};
set local enable_mergejoin = off;
set local enable_nestloop = off
{%- endmacro %}
{% macro spark__heavy_model_settings() -%}
select 1
{%- endmacro %}

{# post-hook of every model (dbt_project.yml): autovacuum leaves a table built into the staging schema
   alone until the build is published, and publishing turns it back on (publish_staging_schemas). Before,
   autovacuum worked through the build's new tables while the build ran, and publishing, which moves
   every table, waited for each autovacuum it had to cancel: Postgres cancels it only after
   deadlock_timeout (1 s), and at 5M instances the publish waited 2 s of its 4.6 s that way. #}
{% macro pause_autovacuum() -%}
{{ return(adapter.dispatch('pause_autovacuum', 'sherliic')()) }}
{%- endmacro %}
{% macro default__pause_autovacuum() -%}
{%- endmacro %}
{% macro postgres__pause_autovacuum() -%}
{%- if builds_into_staging() and config.get('materialized') in paused_materializations() -%}
{{ pause_autovacuum_of(this) }}
{%- endif -%}
{%- endmacro %}
{# the materializations that stage a table (the others stage views): paused here, resumed when published #}
{% macro paused_materializations() -%}
{{ return(['table', 'incremental']) }}
{%- endmacro %}
{# Postgres: also the delta tables of an incremental build (materializations/incremental.sql) #}
{% macro pause_autovacuum_of(relation) -%}
alter table {{ relation }} set (autovacuum_enabled = false)
{%- endmacro %}

{# refresh planner statistics of a freshly built table (post-hook): without them Postgres may pick
   nested loops over million-row tables built a second ago #}
{% macro analyze_table() -%}
{{ return(adapter.dispatch('analyze_table', 'sherliic')()) }}
{%- endmacro %}
{% macro default__analyze_table() -%}
analyze {{ this }}
{%- endmacro %}
{# Spark: a no-op. Its cost-based optimizer is off by default, and join planning only needs the
   table size, which Spark reads from the files; ANALYZE would scan every table once more. #}
{% macro spark__analyze_table() -%}
select 1
{%- endmacro %}

{# on-run-start: fresh statistics of the raw tables that changed since they were last analyzed (loaders
   COPY millions of rows and autovacuum may not have analyzed them yet); the others are left alone, so a
   build over unchanged data analyzes nothing. Once, before any model: as a pre-hook of the first models
   that read them, each ANALYZE held its table's lock until its model committed, and the second model
   waited for the first (4 s at 5M instances). #}
{% macro analyze_changed_sources() -%}
{{ return(adapter.dispatch('analyze_changed_sources', 'sherliic')()) }}
{%- endmacro %}
{# .render(): the table's name, also under `dbt run --empty`, which renders sources as empty subqueries #}
{% macro default__analyze_changed_sources() -%}
do $$
declare
    raw_table regclass;
begin
    foreach raw_table in array array[
        {%- for name in ['load_batches', 'relation_instances', 'entity_types', 'entities'] %}
        {{ sql_string_literal(source('extract', name).render()) }}::regclass{{ ',' if not loop.last }}
        {%- endfor %}
    ] loop
        if exists (
            select 1
            from pg_stat_user_tables
            where relid = raw_table
                and (n_mod_since_analyze > 0 or coalesce(last_analyze, last_autoanalyze) is null)
        ) then
            execute format('analyze %s', raw_table);
        end if;
    end loop;
end
$$
{%- endmacro %}
{% macro spark__analyze_changed_sources() -%}
select 1
{%- endmacro %}

{# one output row per element of an array column (set-returning expression in a select list) #}
{% macro explode_array(arr) -%}
{{ return(adapter.dispatch('explode_array', 'sherliic')(arr)) }}
{%- endmacro %}
{% macro default__explode_array(arr) -%}
unnest({{ arr }})
{%- endmacro %}
{% macro spark__explode_array(arr) -%}
explode({{ arr }})
{%- endmacro %}

{# is bit number `bit` (0-based) of an integer mask set? #}
{% macro bit_is_set(mask, bit) -%}
{{ return(adapter.dispatch('bit_is_set', 'sherliic')(mask, bit)) }}
{%- endmacro %}
{# written as `<> 0`: Postgres estimates an `= 1` on an expression as very selective (0.5 %), and two
   of them ANDed made it plan nested loops and sorts for millions of rows #}
{% macro default__bit_is_set(mask, bit) -%}
((({{ mask }}) >> ({{ bit }})) & 1 <> 0)
{%- endmacro %}
{% macro spark__bit_is_set(mask, bit) -%}
((shiftright({{ mask }}, {{ bit }}) & 1) <> 0)
{%- endmacro %}

{# all (i, j) with bit i set in first_mask and bit j in second_mask (0-based, both < width), as one
   bigint with bit i * width + j set: the product of two type-rank masks (see int_typed_overlaps) #}
{% macro mask_product(first_mask, second_mask, width) -%}
{{ return(adapter.dispatch('mask_product', 'sherliic')(first_mask, second_mask, width)) }}
{%- endmacro %}
{% macro default__mask_product(first_mask, second_mask, width) -%}
(
    {%- for i in range(width) %}
    case when {{ bit_is_set(first_mask, i) }} then cast({{ second_mask }} as bigint) << {{ i * width }} else 0 end
    {{- ' |' if not loop.last }}
    {%- endfor %}
)
{%- endmacro %}
{% macro spark__mask_product(first_mask, second_mask, width) -%}
(
    {%- for i in range(width) %}
    case when {{ bit_is_set(first_mask, i) }} then shiftleft(cast({{ second_mask }} as bigint), {{ i * width }}) else 0 end
    {{- ' |' if not loop.last }}
    {%- endfor %}
)
{%- endmacro %}

{# every `width`-bit mask with each rank (1-based bit number) set in it: joining a mask column to
   this table on `mask` yields one row per admitted slot type rank, so typings can be matched by an
   equi-join on ranks instead of testing every typing against every mask #}
{% macro mask_rank_table(width) -%}
{{ return(adapter.dispatch('mask_rank_table', 'sherliic')(width)) }}
{%- endmacro %}
{% macro default__mask_rank_table(width) -%}
select
    masks.mask,
    ranks.type_rank

from generate_series(0, {{ 2 ** width - 1 }}) as masks (mask)
cross join generate_series(1, {{ width }}) as ranks (type_rank)
where ((masks.mask >> (ranks.type_rank - 1)) & 1) <> 0
{%- endmacro %}
{% macro spark__mask_rank_table(width) -%}
select
    mask,
    type_rank

from (select explode(sequence(0, {{ 2 ** width - 1 }})) as mask) as masks
cross join (select explode(sequence(1, {{ width }})) as type_rank) as ranks
where (shiftright(mask, type_rank - 1) & 1) <> 0
{%- endmacro %}

{# the first factor of a mask_product: bit i set iff some (i, j) bit is set in the product #}
{% macro first_factor(product, width) -%}
(
    {%- for i in range(width) %}
    case when ({{ product }} >> {{ i * width }}) & {{ 2 ** width - 1 }} <> 0 then {{ 2 ** i }} else 0 end
    {{- ' |' if not loop.last }}
    {%- endfor %}
)
{%- endmacro %}

{# integer division of non-negative integers #}
{% macro integer_division(a, b) -%}
{{ return(adapter.dispatch('integer_division', 'sherliic')(a, b)) }}
{%- endmacro %}
{% macro default__integer_division(a, b) -%}
(({{ a }}) / ({{ b }}))
{%- endmacro %}
{% macro spark__integer_division(a, b) -%}
(({{ a }}) div ({{ b }}))
{%- endmacro %}

{# the second factor of a mask_product: bit j set iff some (i, j) bit is set in the product #}
{% macro second_factor(product, width) -%}
(
    {%- for i in range(width) %}
    (({{ product }} >> {{ i * width }}) & {{ 2 ** width - 1 }})
    {{- ' |' if not loop.last }}
    {%- endfor %}
)
{%- endmacro %}

{# pre-hook of models whose aggregates Postgres mis-sizes: group by hashing, never by sorting (a
   misestimate of 10⁵× made it sort 12M rows at 5M instances and spill them to disk); no-op elsewhere #}
{% macro hash_aggregates_only() -%}
{{ return(adapter.dispatch('hash_aggregates_only', 'sherliic')()) }}
{%- endmacro %}
{% macro default__hash_aggregates_only() -%}
set local enable_sort = off
{%- endmacro %}
{% macro spark__hash_aggregates_only() -%}
select 1
{%- endmacro %}

{# `name as {{ computed_once() }} (...)`: a CTE Postgres computes once however often the query reads it
   (a scalar subquery over it is copied into every expression that uses its column); Spark plans CTEs
   its own way #}
{% macro computed_once() -%}
{{ return(adapter.dispatch('computed_once', 'sherliic')()) }}
{%- endmacro %}
{% macro default__computed_once() -%}
materialized
{%- endmacro %}
{% macro spark__computed_once() -%}
{%- endmacro %}

{# pre-hook of models whose joins must run in the order they are written (Postgres: the join order
   search otherwise trusts estimates that bit tests make 10⁴× too small, and joined the entity keys
   after the 12M-row expansion to typed relations instead of before); no-op elsewhere #}
{% macro joins_in_written_order() -%}
{{ return(adapter.dispatch('joins_in_written_order', 'sherliic')()) }}
{%- endmacro %}
{% macro default__joins_in_written_order() -%}
set local join_collapse_limit = 1;
set local from_collapse_limit = 1
{%- endmacro %}
{% macro spark__joins_in_written_order() -%}
select 1
{%- endmacro %}

{# pre-hook of the heavy models OFF the build's critical path (the chain of dependent models the build
   waits for, docs/performance.md): one process each, no parallel workers. Their parallel plans cost more
   CPU in all (teg_edges' three processes each built the same hash of typings: 8 s more CPU at 5M), and
   on two cores the workers took CPU from the model on the chain that ran beside them. Also of the two
   halves of int_source_pairs, whose workers' partial groups hardly merge (int_source_pairs_half_1). #}
{% macro serial_plan() -%}
{{ return(adapter.dispatch('serial_plan', 'sherliic')()) }}
{%- endmacro %}
{% macro default__serial_plan() -%}
set local max_parallel_workers_per_gather = 0
{%- endmacro %}
{% macro spark__serial_plan() -%}
select 1
{%- endmacro %}
