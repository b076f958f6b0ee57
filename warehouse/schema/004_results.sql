-- Results schema: what the baselines write (dbt does not build these; the Python baselines do).
-- All statements are idempotent (applied by `sherliic-db init` and, when the schema is missing or
-- outdated, by the loaders: warehouse.server.ensure_schema).

create schema if not exists results;

-- One row per build, method, benchmark and split: the metrics of docs/design.md §8 at the dev-tuned
-- threshold. build: the build whose marts the scores read ('default' = schema warehouse); build_id: its
-- record in builds.builds (null: built without a record).
create table if not exists results.baseline_scores (
    build       text not null default 'default',
    build_id    bigint,
    method      text not null,
    dataset     text not null,
    split       text not null,
    threshold   double precision,
    precision   double precision,
    recall      double precision,
    f1          double precision,
    auc_pr50    double precision,
    auc_norm    double precision,
    roc_auc     double precision,
    n_items     integer not null,
    n_covered   integer not null,
    computed_at timestamptz not null default now()
);
-- databases made before builds were named: their rows are the default build's
alter table results.baseline_scores add column if not exists build text not null default 'default';
alter table results.baseline_scores add column if not exists build_id bigint;
alter table results.baseline_scores drop constraint if exists baseline_scores_pkey;
create unique index if not exists baseline_scores_key on results.baseline_scores (build, method, dataset, split);

-- Noisy labels for every InfCand of a build from the best dev baseline (`make noisy-labels`); replaced
-- per run and build.
create table if not exists results.infcand_noisy_labels (
    build                   text not null default 'default',
    build_id                bigint,
    premise_typed_rel_id    bigint not null,
    hypothesis_typed_rel_id bigint not null,
    alignment               text not null,
    method                  text not null,
    dev_f1                  double precision,
    threshold               double precision,
    raw_score               double precision,
    score                   double precision not null,
    noisy_label             boolean not null,
    created_at              timestamptz not null default now()
);
alter table results.infcand_noisy_labels add column if not exists build text not null default 'default';
alter table results.infcand_noisy_labels add column if not exists build_id bigint;
alter table results.infcand_noisy_labels drop constraint if exists infcand_noisy_labels_pkey;
create unique index if not exists infcand_noisy_labels_key
    on results.infcand_noisy_labels (build, premise_typed_rel_id, hypothesis_typed_rel_id, alignment);
