-- The raw schema as Spark tables (SHERLIIC_ENGINE=spark): the same tables and columns as
-- warehouse/schema/*.sql, stored as Parquet in the Spark catalog (warehouse.engine). Spark's session
-- catalog has no keys, identities, defaults or NOT NULL on Parquet tables: the loaders assign ids and
-- check rows before writing. jsonb columns hold the JSON text; timestamptz are UTC timestamps.
-- The tables holding a batch's rows are partitioned by batch_id: a load writes its batch's partition
-- and a replaced or failed batch is dropped as a partition (extract.spark_load).
-- Statements are separated by `;` at a line end and idempotent (warehouse.spark_raw.apply_spark_schema).

create database if not exists raw;

create table if not exists raw.load_batches (
    batch_id bigint, source_file string, source_format string, kind string, checksum string,
    status string, n_documents bigint, n_sentences bigint, n_mentions bigint, n_instances bigint,
    n_rows bigint, n_bad_lines bigint, options string, started_at timestamp, finished_at timestamp,
    corpus_name string
) using parquet;

create table if not exists raw.sentences (
    sentence_id bigint, batch_id bigint, document_id string, line_number int, sentence_index int,
    text string
) using parquet partitioned by (batch_id);

create table if not exists raw.documents (
    batch_id bigint, document_id string, line_number int
) using parquet partitioned by (batch_id);

create table if not exists raw.entities (
    batch_id bigint, entity_id string, entity_name string
) using parquet partitioned by (batch_id);

create table if not exists raw.entity_types (
    batch_id bigint, entity_id string, type_name string, type_source string
) using parquet partitioned by (batch_id);

create table if not exists raw.type_mappings (
    batch_id bigint, source_type string, target_type string
) using parquet partitioned by (batch_id);

create table if not exists raw.relation_instances (
    instance_id bigint, batch_id bigint, sentence_id bigint, path string, arg1_entity_id string,
    arg2_entity_id string, subject_side smallint
) using parquet partitioned by (batch_id);

create table if not exists raw.path_rejections (
    batch_id bigint, rule string, n_paths bigint
) using parquet partitioned by (batch_id);

create table if not exists raw.benchmark_items (
    batch_id bigint, dataset string, split string, item_id string, line_number int,
    premise_path string, hypothesis_path string, premise_type_a string, premise_type_b string,
    hypothesis_type_a string, hypothesis_type_b string, is_premise_reversed boolean,
    is_hypothesis_reversed boolean, premise_text string, hypothesis_text string,
    premise_middle string, hypothesis_middle string, label boolean, extra string
) using parquet;

create table if not exists raw.annotation_batches (
    batch_name string, task string, seed int, stratify_by string, n_items int, options string,
    created_at timestamp, build string, build_id bigint
) using parquet;

create table if not exists raw.annotation_items (
    item_id string, batch_name string, premise_group_id string, stratum string,
    premise_typed_rel_id bigint, hypothesis_typed_rel_id bigint, premise_rel_id bigint,
    hypothesis_rel_id bigint, premise_tsg_index int, hypothesis_tsg_index int, alignment string,
    premise_path string, hypothesis_path string, premise_type_a string, premise_type_b string,
    hypothesis_type_a string, hypothesis_type_b string, prem_argleft string, prem_middle string,
    prem_argright string, prem_end string, hypo_argleft string, hypo_middle string,
    hypo_argright string, hypo_end string, premise_text string, hypothesis_text string,
    examples_a array<string>, examples_b array<string>, relv double, sigma double, esr double,
    score double
) using parquet;

create table if not exists raw.annotation_judgements (
    judgement_id bigint, item_id string, worker_id string, task string, answer string,
    premise_meaningful boolean, hypothesis_meaningful boolean, source string, source_line int,
    created_at timestamp
) using parquet;

-- The verifier scores of the inference candidates (warehouse/schema/006_verifier_scores.sql): written
-- to Postgres like every result; `make rank` on Spark keeps a copy of each ranking here, one partition
-- per (build, verifier, backend), for the dbt mart candidate_verifier_scores.
create database if not exists results;

create table if not exists results.verifiers (
    verifier_key string, verifier_name string, description string, created_at timestamp
) using parquet;

create table if not exists results.verifier_scores (
    candidate_key string, verifier_score double, premise_sentence string, hypothesis_sentence string,
    scored_at timestamp, build string, verifier_key string, backend string
) using parquet partitioned by (build, verifier_key, backend);
