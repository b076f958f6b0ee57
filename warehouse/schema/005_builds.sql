-- Build records: one row per `sherliic-dbt run`/`build` (builds/records.py writes them; the dbt project's
-- publish marks the row published in the transaction that publishes the marts). A schema of its own:
-- neither loaded input (raw) nor results, and it must outlive every build schema it describes.
-- All statements are idempotent (`sherliic-db init`; the loaders via warehouse.server.ensure_schema).

create schema if not exists builds;

create table if not exists builds.builds (
    build_id         bigint generated always as identity primary key,
    build_name       text not null,              -- 'default' (schema warehouse) or the name of --build
    schema_name      text not null,              -- the schema its marts are published to
    engine           text not null default 'postgres',
    command          text not null,              -- the dbt command line after `dbt` (run/build and its args)
    status           text not null default 'running'
        check (status in ('running', 'succeeded', 'failed', 'cancelled')),
    started_at       timestamptz not null default now(),
    finished_at      timestamptz,
    -- set by the publish, in the transaction that moves the marts into schema_name (macros/atomic_publish.sql)
    published_at     timestamptz,
    published_models jsonb not null default '[]'::jsonb,
    vars             jsonb not null default '{}'::jsonb,   -- every dbt var: defaults merged with --vars
    corpora          jsonb not null default '[]'::jsonb,   -- [{corpus, batches: [{batch_id, checksum, ...}]}]
    type_tables      jsonb not null default '[]'::jsonb,   -- types / type_map batches the vars select
    git_commit       text,
    git_dirty        boolean,
    versions         jsonb not null default '{}'::jsonb,   -- dbt-core, adapter, spaCy, python, project
    row_counts       jsonb not null default '{}'::jsonb,   -- mart -> rows in schema_name after the build
    exit_code        integer,
    error            text,                               -- the line that says why it failed
    wrapper_pid      integer                             -- the sherliic-dbt process that ran it
);
-- how the graph was built (Postgres): incremental (from the new batches only) or full, and the one line
-- that says why (int_build_plan; macros/incremental.sql); null when the build did not build the graph
alter table builds.builds add column if not exists incremental boolean;
alter table builds.builds add column if not exists build_plan text;
create index if not exists builds_by_name on builds.builds (build_name, build_id);

-- Who ran a build and how to find its process (docs/design.md §2, "Builds"). The dbt project writes the
-- record itself (dbt_project/macros/build_records.sql calls the functions below), so a plain `dbt run` is
-- recorded like a `sherliic-dbt` one; sherliic-dbt adds what dbt cannot know (git, versions) and holds
-- the schema's lock while its dbt runs.
alter table builds.builds add column if not exists runner text;             -- 'dbt' or 'sherliic-dbt'
alter table builds.builds add column if not exists runner_token text;       -- sherliic-dbt's key for its build
alter table builds.builds add column if not exists runner_lock_pid integer; -- backend holding sherliic-dbt's lock
alter table builds.builds add column if not exists dbt_invocation_id text;
-- the models built into the staging schema when a build failed: what `dbt retry` resumes from
alter table builds.builds add column if not exists staged_models jsonb;
alter table builds.builds add column if not exists retry_of bigint;
alter table builds.builds add column if not exists hint text;               -- what to change (0 candidates)
create unique index if not exists builds_by_invocation on builds.builds (dbt_invocation_id);

-- What every connection of a build's dbt is called (application_name; dbt_project/profiles.yml names it
-- after the dbt var `build`), so that pg_stat_activity shows which build a connection works for, and
-- whether a build's process is alive.
create or replace function builds.connection_tag(p_build_name text) returns text
language sql immutable as $$ select 'sherliic build ' || p_build_name $$;

-- Whether the process that runs a build is still there: another connection carries the build's name (the
-- caller's own does not count), or the sherliic-dbt that started it still holds its schema's lock.
create or replace function builds.is_alive(p_build_name text, p_runner_lock_pid integer) returns boolean
language sql stable as $$
    select exists (
        select 1 from pg_stat_activity
        where application_name = builds.connection_tag(p_build_name) and pid <> pg_backend_pid()
    ) or exists (
        select 1 from pg_locks where locktype = 'advisory' and granted and pid = p_runner_lock_pid
    )
$$;

-- The running build of a schema whose process is alive (its id, else null); records left `running` by a
-- process that died are marked failed. Between two models a build has no connection for a moment, so a
-- record is only declared dead after `p_patience` without one.
create or replace function builds.settle_running(p_schema text, p_patience interval default '5 seconds')
returns bigint language plpgsql as $$
declare
    candidate record;
    deadline timestamptz;
begin
    for candidate in
        select build_id, build_name, runner_lock_pid from builds.builds
        where schema_name = p_schema and status = 'running' order by build_id desc
    loop
        deadline := clock_timestamp() + p_patience;
        loop
            if builds.is_alive(candidate.build_name, candidate.runner_lock_pid) then
                return candidate.build_id;
            end if;
            exit when clock_timestamp() > deadline;
            perform pg_sleep(0.1);
        end loop;
        update builds.builds
        set status = 'failed', finished_at = coalesce(finished_at, now()),
            error = 'its dbt process ended before recording an outcome (interrupted or killed)'
        where build_id = candidate.build_id and status = 'running';
    end loop;
    return null;
end $$;

-- The loaded batches the vars select: the corpora with their batches, and the type tables (types batches
-- of the type_sources; type_map batches only with map_types).
create or replace function builds.build_inputs(p_vars jsonb, out corpora jsonb, out type_tables jsonb)
language sql stable as $$
    with

    wanted as (
        select
            case jsonb_typeof(p_vars -> 'corpora')
                when 'null' then null when 'string' then array[p_vars ->> 'corpora']
                when 'array' then array(select jsonb_array_elements_text(p_vars -> 'corpora'))
                else '{}'::text[]
            end as corpora,
            case jsonb_typeof(p_vars -> 'type_sources')
                when 'null' then null when 'string' then array[p_vars ->> 'type_sources']
                when 'array' then array(select jsonb_array_elements_text(p_vars -> 'type_sources'))
                else '{}'::text[]
            end as type_sources,
            coalesce(p_vars -> 'map_types' = 'true'::jsonb, false) as map_types
    ),

    corpus_batches as (
        select
            batches.corpus_name,
            jsonb_agg(jsonb_build_object(
                'batch_id', batches.batch_id, 'source_file', batches.source_file,
                'source_format', batches.source_format, 'checksum', batches.checksum,
                'n_documents', batches.n_documents, 'n_instances', batches.n_instances,
                'finished_at', batches.finished_at, 'parser', batches.options ->> 'parser'
            ) order by batches.batch_id) as batches
        from raw.load_batches as batches
        cross join wanted
        where batches.kind = 'corpus' and batches.status = 'loaded'
            and (wanted.corpora is null or batches.corpus_name = any(wanted.corpora))
        group by batches.corpus_name
    ),

    type_batches as (
        select jsonb_agg(jsonb_build_object(
            'batch_id', batches.batch_id, 'kind', batches.kind,
            'type_source', batches.options ->> 'type_source', 'source_file', batches.source_file,
            'source_format', batches.source_format, 'checksum', batches.checksum,
            'n_rows', batches.n_rows, 'finished_at', batches.finished_at
        ) order by batches.batch_id) as tables
        from raw.load_batches as batches
        cross join wanted
        where batches.status = 'loaded' and (
            (batches.kind = 'types' and (
                wanted.type_sources is null or batches.options ->> 'type_source' = any(wanted.type_sources)
            ))
            or (batches.kind = 'type_map' and wanted.map_types)
        )
    )

    select
        coalesce(
            (select jsonb_agg(jsonb_build_object('corpus', corpus_name, 'batches', batches) order by corpus_name)
             from corpus_batches),
            '[]'::jsonb
        ),
        coalesce((select tables from type_batches), '[]'::jsonb)
$$;

-- A new `running` record (its id), called by the dbt project when a build starts (on-run-start). One build
-- of a schema at a time: a running build of the schema whose process is alive is refused in one line
-- (sherliic-dbt waits for the schema's lock before it starts dbt, so its builds never get here).
-- p_runner: what sherliic-dbt adds ({runner, token, lock_pid, git_commit, git_dirty, versions, command});
-- {} for plain dbt.
create or replace function builds.begin_build(
    p_build_name text, p_schema text, p_engine text, p_command text, p_vars jsonb, p_invocation_id text,
    p_runner jsonb, p_versions jsonb, p_retry_of bigint default null
) returns bigint language plpgsql as $$
declare
    running bigint;
    since timestamptz;
    running_runner text;
    inputs record;
    inherited jsonb;
    new_id bigint;
begin
    perform pg_advisory_xact_lock(hashtext('sherliic-build-start'), hashtext(p_schema));
    running := builds.settle_running(p_schema);
    if running is not null then
        select started_at, runner into since, running_runner from builds.builds where build_id = running;
        raise exception 'build #% of schema % is running (% since %): one build of a schema at a time; '
            'start this one when it has ended (sherliic-dbt waits by itself)',
            running, p_schema, coalesce(running_runner, 'dbt'), to_char(since, 'YYYY-MM-DD HH24:MI:SS');
    end if;
    -- a build empties the staging schema that a failed build left for `dbt retry`; a retry resumes it,
    -- and its record takes over the list of what is staged
    select staged_models into inherited from builds.builds where build_id = p_retry_of;
    update builds.builds set staged_models = null
    where schema_name = p_schema and staged_models is not null;
    select * into inputs from builds.build_inputs(p_vars);
    insert into builds.builds (
        build_name, schema_name, engine, command, vars, corpora, type_tables, git_commit, git_dirty,
        versions, runner, runner_token, runner_lock_pid, dbt_invocation_id, retry_of, staged_models
    ) values (
        p_build_name, p_schema, p_engine, coalesce(p_runner ->> 'command', p_command), p_vars,
        inputs.corpora, inputs.type_tables, p_runner ->> 'git_commit', (p_runner ->> 'git_dirty')::boolean,
        coalesce(p_runner -> 'versions', '{}'::jsonb) || p_versions, coalesce(p_runner ->> 'runner', 'dbt'),
        p_runner ->> 'token', (p_runner ->> 'lock_pid')::integer, p_invocation_id, p_retry_of, inherited
    )
    returning build_id into new_id;
    return new_id;
end $$;

-- Whether a build may still be published: its record is running, and the sherliic-dbt that started it
-- (if one did) is still there (it holds its schema's lock while its dbt runs). A build whose sherliic-dbt
-- was killed is not published: its dbt, stopped by the parent-death signal, could not tell the publish
-- while the publish waits (dbt hears a signal only when its statement returns). '' when it may.
create or replace function builds.why_not_publishable(p_build_id bigint) returns text
language plpgsql stable as $$
declare
    record_status text;
    lock_pid integer;
begin
    select status, runner_lock_pid into record_status, lock_pid from builds.builds where build_id = p_build_id;
    if record_status is distinct from 'running' then
        return format('build #%s is no longer running (%s): nothing is published',
            p_build_id, coalesce(record_status, 'no record'));
    end if;
    if lock_pid is not null and not exists (
        select 1 from pg_locks where locktype = 'advisory' and granted and pid = lock_pid
    ) then
        return format('the sherliic-dbt that started build #%s has ended: nothing is published', p_build_id);
    end if;
    return '';
end $$;

-- Inside the publishing transaction, once its locks are held: the build's record, locked, must still be
-- publishable (sherliic-dbt marks it cancelled on SIGINT/SIGTERM before it passes the signal on, so a
-- cancelled build never publishes, whichever comes first).
create or replace function builds.claim_for_publish(p_build_id bigint) returns void
language plpgsql as $$
declare
    why text;
begin
    perform 1 from builds.builds where build_id = p_build_id for update;
    why := builds.why_not_publishable(p_build_id);
    if why <> '' then
        raise exception '%', why;
    end if;
end $$;

-- Inside the publishing transaction, last: the record says what was published, with the marts' rows, in
-- the transaction that publishes them (a reader never sees marts and record disagree).
create or replace function builds.finish_published(p_build_id bigint, p_models jsonb, p_row_counts jsonb)
returns void language sql as $$
    update builds.builds
    set status = 'succeeded', finished_at = clock_timestamp(), published_at = clock_timestamp(),
        published_models = p_models, row_counts = p_row_counts, staged_models = null, exit_code = 0
    where build_id = p_build_id
$$;

-- A build that did not publish: why, and what it left in its staging schema for `dbt retry`. A build
-- already marked cancelled stays cancelled.
create or replace function builds.finish_failed(p_build_id bigint, p_error text, p_staged jsonb)
returns void language sql as $$
    update builds.builds
    set status = case when status = 'running' then 'failed' else status end,
        finished_at = coalesce(finished_at, clock_timestamp()),
        error = coalesce(error, p_error), staged_models = p_staged
    where build_id = p_build_id
$$;

-- The sessions other than this one that hold a lock on any of the relations (names as
-- "schema"."name"): "pid 123 (psql, idle in transaction since 12:00:01)", for messages; '' when none.
create or replace function builds.lock_holders(p_relations jsonb) returns text
language sql stable as $$
    select coalesce(string_agg(distinct format(
        'pid %s (%s, %s since %s)', activity.pid,
        coalesce(nullif(activity.application_name, ''), activity.backend_type),
        coalesce(activity.state, 'running'), to_char(coalesce(activity.xact_start, activity.backend_start), 'HH24:MI:SS')
    ), ', '), '')
    from pg_locks as locks
    inner join pg_stat_activity as activity on locks.pid = activity.pid
    where locks.granted and locks.pid <> pg_backend_pid()
        and locks.relation in (
            select to_regclass(name) from jsonb_array_elements_text(p_relations) as name
        )
$$;

-- ACCESS EXCLUSIVE locks on every relation a publish drops or updates, taken together or not at all, in
-- attempts that never keep a reader waiting for long: for the first second without waiting (NOWAIT),
-- then in the lock queue (readers arriving meanwhile wait behind the publish, so a stream of readers
-- cannot starve it) for at most half a second per attempt. Half a second is less than deadlock_timeout:
-- a reader that holds one mart and waits for another that the attempt holds (an export reading file
-- after file) is let go before Postgres would take it for a deadlock and abort one of the two. An
-- autovacuum in the way is waited for longer, which cancels it (as any lock request does). A build
-- that stops being publishable meanwhile (builds.why_not_publishable) stops waiting. After p_timeout: one
-- line naming the readers.
create or replace function builds.lock_for_publish(
    p_build_id bigint, p_relations jsonb, p_timeout interval
) returns void
language plpgsql as $$
declare
    started timestamptz := clock_timestamp();
    why text;
    attempt_started timestamptz;
    relation text;
    remaining interval;
    holders text;
    only_autovacuum boolean;
begin
    loop
        select not exists (
            select 1 from pg_locks as locks
            inner join pg_stat_activity as activity on locks.pid = activity.pid
            where locks.granted and locks.pid <> pg_backend_pid()
                and activity.backend_type <> 'autovacuum worker'
                and locks.relation in (select to_regclass(name) from jsonb_array_elements_text(p_relations) as name)
        ) into only_autovacuum;
        begin
            attempt_started := clock_timestamp();
            for relation in
                select name from jsonb_array_elements_text(p_relations) as name where to_regclass(name) is not null
            loop
                if clock_timestamp() - started < interval '1 second' then
                    execute format('lock table %s in access exclusive mode nowait', relation);
                else
                    remaining := case when only_autovacuum then interval '5 seconds' else interval '500 milliseconds' end
                        - (clock_timestamp() - attempt_started);
                    if remaining <= interval '0' then
                        raise sqlstate '55P03';  -- lock_not_available: this attempt is over
                    end if;
                    perform set_config('lock_timeout', ceil(extract(epoch from remaining) * 1000)::text || 'ms', true);
                    execute format('lock table %s in access exclusive mode', relation);
                end if;
            end loop;
            perform set_config('lock_timeout', '0', true);
            return;
        exception when lock_not_available or deadlock_detected then
            null;  -- every lock of the attempt is released with it
        end;
        -- a build stopped meanwhile (cancelled, or its sherliic-dbt killed) waits no longer
        why := builds.why_not_publishable(p_build_id);
        if why <> '' then
            raise exception '%', why;
        end if;
        if clock_timestamp() - started > p_timeout then
            holders := builds.lock_holders(p_relations);
            raise exception 'readers held the marts for longer than publish_timeout (%): %', p_timeout,
                coalesce(nullif(holders, ''), 'they have just ended; build again');
        end if;
        perform pg_sleep(0.05);
    end loop;
end $$;

-- The last statement of a build's on-run-end: fails (so dbt's exit code says so) unless the record says
-- the build was published.
create or replace function builds.assert_published(p_build_id bigint) returns void
language plpgsql as $$
declare
    outcome record;
begin
    select status, error into outcome from builds.builds where build_id = p_build_id;
    if outcome.status is distinct from 'succeeded' then
        raise exception 'build #% %: %; nothing was published', p_build_id, outcome.status, outcome.error;
    end if;
end $$;
