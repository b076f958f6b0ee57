-- Build records: one row per `sherliic-dbt run`/`build` (warehouse/builds.py writes them; the dbt project's
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
