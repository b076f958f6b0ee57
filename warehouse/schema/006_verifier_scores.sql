-- Verifier scores of the inference candidates (`make rank`, lm/rank/): Postgres on either engine,
-- like every result. Idempotent (`sherliic-db init`; the loaders and `make rank` via ensure_schema).

create schema if not exists results;

-- One row per verifier: a model, patterns, training items and seeds (its key: a hash of its runs' keys).
create table if not exists results.verifiers (
    verifier_key  text primary key,
    verifier_name text not null,
    description   jsonb not null default '{}'::jsonb,  -- model, patterns, seeds, training, run keys
    created_at    timestamptz not null default now()
);

-- One row per build, verifier, scoring backend and candidate (inference_candidates.candidate_key, stable
-- across builds). build: 'default' = schema warehouse, else the named build (schema build_<name>);
-- build_id: the record (builds.builds) of the build whose candidates the ranking read (null: a build
-- without a record, or a row written before it was kept).
-- backend: torch and onnx-fp32 agree within 1e-5; onnx-int8 approximates them, so its rows are its own.
-- Written in committed chunks: a killed ranking resumes where it stopped, a finished one is not redone.
create table if not exists results.verifier_scores (
    build               text not null default 'default',
    build_id            bigint,
    verifier_key        text not null references results.verifiers (verifier_key),
    backend             text not null,
    candidate_key       text not null,
    verifier_score      double precision not null,
    premise_sentence    text not null,
    hypothesis_sentence text not null,
    scored_at           timestamptz not null default now(),
    primary key (build, verifier_key, backend, candidate_key)
);
-- databases made before the build's record was kept with its scores
alter table results.verifier_scores add column if not exists build_id bigint;
