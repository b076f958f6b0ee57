-- Results schema: what the baselines write (dbt does not build these; the Python baselines do).
-- All statements are idempotent (applied by `sherliic-db init` and, when the schema is missing or
-- outdated, by the loaders: warehouse.server.ensure_schema).

create schema if not exists results;

-- One row per method, benchmark and split: the metrics of docs/design.md §8 at the dev-tuned threshold.
create table if not exists results.baseline_scores (
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
    computed_at timestamptz not null default now(),
    primary key (method, dataset, split)
);

-- Noisy labels for every InfCand from the best dev baseline (`make noisy-labels`); replaced per run.
create table if not exists results.infcand_noisy_labels (
    premise_typed_rel_id    bigint not null,
    hypothesis_typed_rel_id bigint not null,
    alignment               text not null,
    method                  text not null,
    dev_f1                  double precision,
    threshold               double precision,
    raw_score               double precision,
    score                   double precision not null,
    noisy_label             boolean not null,
    created_at              timestamptz not null default now(),
    primary key (premise_typed_rel_id, hypothesis_typed_rel_id, alignment)
);
