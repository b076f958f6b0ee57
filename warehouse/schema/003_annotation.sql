-- Annotation of inference candidates (paper §3; Zeichner et al. 2012 two-step variant).
-- Items are snapshots of sampled InfCands (rendered text, example entities, scores), so judgements
-- stay interpretable after the TEG is rebuilt. dbt (tag:annotation) aggregates the judgements.
-- All statements are idempotent (`sherliic-db init`; the loaders via warehouse.server.ensure_schema).

create schema if not exists raw;

-- One row per sampled batch: how it was drawn, so a batch can be re-drawn identically.
create table if not exists raw.annotation_batches (
    batch_name      text primary key,
    task            text not null default 'sherliic' check (task in ('sherliic', 'zeichner')),
    seed            integer not null,
    stratify_by     text not null,
    n_items         integer not null default 0,
    options         jsonb not null default '{}'::jsonb,
    created_at      timestamptz not null default now()
);
-- the build whose inference candidates the batch was drawn from ('default' = schema warehouse) and its
-- record in builds.builds (null: built without a record, or sampled before builds were recorded)
alter table raw.annotation_batches add column if not exists build text;
alter table raw.annotation_batches add column if not exists build_id bigint;

-- One row per InfCand to annotate. item_id is stable and shown to annotators/crowd platforms.
-- premise_group_id groups the hypotheses shown together under one premise fact.
create table if not exists raw.annotation_items (
    item_id                 text primary key,
    batch_name              text not null references raw.annotation_batches (batch_name) on delete cascade,
    premise_group_id        text not null,
    stratum                 text not null default '',
    premise_typed_rel_id    bigint,
    hypothesis_typed_rel_id bigint,
    premise_rel_id          bigint,
    hypothesis_rel_id       bigint,
    premise_tsg_index       integer,
    hypothesis_tsg_index    integer,
    alignment               text not null check (alignment in ('straight', 'crossed')),
    premise_path            text not null,
    hypothesis_path         text not null,
    premise_type_a          text,
    premise_type_b          text,
    hypothesis_type_a       text,
    hypothesis_type_b       text,
    -- rendering split like the SherLIiC CSV (argleft, middle, argright, end)
    prem_argleft            text not null,
    prem_middle             text not null,
    prem_argright           text not null,
    prem_end                text not null default '',
    hypo_argleft            text not null,
    hypo_middle             text not null,
    hypo_argright           text not null,
    hypo_end                text not null default '',
    premise_text            text not null,
    hypothesis_text         text not null,
    examples_a              text[] not null default '{}',
    examples_b              text[] not null default '{}',
    relv                    double precision,
    sigma                   double precision,
    esr                     double precision,
    score                   double precision
);
create index if not exists annotation_items_batch on raw.annotation_items (batch_name);

-- One row per judgement. answer: 'yes' | 'no' | 'incomprehensible'.
-- Zeichner's variant also records whether each side is meaningful; a side judged meaningless
-- makes the judgement 'incomprehensible' (entailment is then not asked).
create table if not exists raw.annotation_judgements (
    judgement_id            bigint generated always as identity primary key,
    item_id                 text not null references raw.annotation_items (item_id) on delete cascade,
    worker_id               text not null,
    task                    text not null default 'sherliic' check (task in ('sherliic', 'zeichner')),
    answer                  text not null check (answer in ('yes', 'no', 'incomprehensible')),
    premise_meaningful      boolean,
    hypothesis_meaningful   boolean,
    source                  text not null,            -- 'web' or the imported results file
    source_line             integer,
    created_at              timestamptz not null default now(),
    unique (item_id, worker_id, task),
    check (
        task = 'sherliic'
        or (premise_meaningful is not null and hypothesis_meaningful is not null
            and ((premise_meaningful and hypothesis_meaningful) = (answer <> 'incomprehensible')))
    )
);
create index if not exists annotation_judgements_worker on raw.annotation_judgements (worker_id);
