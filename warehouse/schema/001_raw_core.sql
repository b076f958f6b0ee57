-- Raw schema: what the extractors load. dbt reads these tables as source `extract` (dbt_project/models/staging/extract).
-- Every row belongs to a load batch, so a batch can be rolled back or replaced as a whole.
-- All statements are idempotent (`sherliic-db init`; the loaders via warehouse.server.ensure_schema).

create schema if not exists raw;

-- One row per loaded input file. checksum = sha256 of the file's bytes; a file already loaded
-- (same checksum and kind) is skipped unless the loader is told to replace it.
create table if not exists raw.load_batches (
    batch_id        bigint generated always as identity primary key,
    source_file     text not null,
    source_format   text not null,          -- jsonl, fewrel, trex, google_re, facc1, conllu, text, types_*, ...
    kind            text not null,          -- corpus | types | type_map | benchmark | annotation
    checksum        text not null,
    status          text not null default 'loading' check (status in ('loading', 'loaded', 'failed')),
    n_documents     bigint not null default 0,
    n_sentences     bigint not null default 0,
    n_mentions      bigint not null default 0,
    n_instances     bigint not null default 0,
    n_rows          bigint not null default 0,  -- rows of type tables / benchmarks / other kinds
    n_bad_lines     bigint not null default 0,  -- lines skipped with --skip-bad
    options         jsonb not null default '{}'::jsonb,
    started_at      timestamptz not null default now(),
    finished_at     timestamptz
);
create unique index if not exists load_batches_checksum_loaded
    on raw.load_batches (kind, source_format, checksum) where status = 'loaded';

-- The corpus a corpus batch belongs to (`sherliic-extract corpus --corpus NAME`, default the file's
-- stem): the dbt var `corpora` builds the graph from some corpora only, and `sherliic-extract remove
-- --corpus NAME` drops one. Null for the other kinds: type tables and maps are global (entity -> type).
alter table raw.load_batches add column if not exists corpus_name text;
-- Batches loaded before corpora had names: each file was its own corpus, named by its stem (the default).
update raw.load_batches
set corpus_name = regexp_replace(regexp_replace(source_file, '^.*/', ''), '[.][^.]*$', '')
where kind = 'corpus' and corpus_name is null;
create index if not exists load_batches_corpus on raw.load_batches (corpus_name) where kind = 'corpus';

-- Sentences kept for provenance: "which sentences support this rule?"
create table if not exists raw.sentences (
    sentence_id     bigint generated always as identity primary key,
    batch_id        bigint not null references raw.load_batches (batch_id) on delete cascade,
    document_id     text not null,
    line_number     integer not null,       -- line of the input file the sentence came from
    sentence_index  integer not null default 0,
    text            text not null
);
create index if not exists sentences_batch on raw.sentences (batch_id);

-- Every document read from a corpus batch, with or without kept paths: a document id names one document
-- within a corpus (the loaders refuse, or skip with --on-duplicate skip, an id already used in the file
-- or in another loaded batch of the corpus).
create table if not exists raw.documents (
    batch_id        bigint not null references raw.load_batches (batch_id) on delete cascade,
    document_id     text not null,
    line_number     integer not null,       -- line of the input file the document starts on
    primary key (batch_id, document_id)
);
create index if not exists documents_document on raw.documents (document_id);

-- Entities seen in a batch, with a display name (the mention's surface form or KG label).
create table if not exists raw.entities (
    batch_id        bigint not null references raw.load_batches (batch_id) on delete cascade,
    entity_id       text not null,
    entity_name     text not null,
    primary key (batch_id, entity_id)
);

-- Entity -> type, with the source of the type (freebase, figer, ner, textent, ...).
create table if not exists raw.entity_types (
    batch_id        bigint not null references raw.load_batches (batch_id) on delete cascade,
    entity_id       text not null,
    type_name       text not null,
    type_source     text not null,
    primary key (batch_id, entity_id, type_name, type_source)
);
create index if not exists entity_types_entity on raw.entity_types (entity_id);

-- Type maps such as Freebase -> FIGER.
create table if not exists raw.type_mappings (
    batch_id        bigint not null references raw.load_batches (batch_id) on delete cascade,
    source_type     text not null,
    target_type     text not null,
    primary key (batch_id, source_type, target_type)
);

-- One row per kept dependency path between two linked mentions of one sentence.
-- Paths are stored in canonical orientation: the subject (nsubj/nsubjpass end) on the left, so
-- each relation has exactly one spelling and each logical rule is found once (straight or crossed).
-- arg1 = entity at the path's left end (argument A, the subject), arg2 = right end (argument B).
-- subject_side records which mention of the sentence (1 = the earlier, 2 = the later) is the
-- subject, i.e. whether the reading-order path was reversed to make it canonical.
create table if not exists raw.relation_instances (
    instance_id     bigint generated always as identity primary key,
    batch_id        bigint not null references raw.load_batches (batch_id) on delete cascade,
    sentence_id     bigint references raw.sentences (sentence_id) on delete cascade,
    path            text not null,
    arg1_entity_id  text not null,
    arg2_entity_id  text not null,
    subject_side    smallint not null check (subject_side in (1, 2))
);
create index if not exists relation_instances_batch on raw.relation_instances (batch_id);
-- Deleting a sentence cascades to its instances: without this index every deleted sentence scanned the
-- whole table (removing a 20k-document batch took minutes instead of seconds).
create index if not exists relation_instances_sentence on raw.relation_instances (sentence_id);

-- Paths rejected by the Appendix A filters, counted per rule and batch.
create table if not exists raw.path_rejections (
    batch_id        bigint not null references raw.load_batches (batch_id) on delete cascade,
    rule            text not null,
    n_paths         bigint not null,
    primary key (batch_id, rule)
);
