-- Benchmark items (SherLIiC dev/test, Levy/Holt, Zeichner): what evaluation.datasets loads.
-- Each file is one raw.load_batches row of kind 'benchmark' (idempotent by checksum, replaceable).
-- Paths are in the benchmark's own orientation (SherLIiC: left end = argument A); the warehouse
-- relation of a path is deppath.paths.canonical_path(path). All statements are idempotent.

create table if not exists raw.benchmark_items (
    batch_id                bigint not null references raw.load_batches (batch_id) on delete cascade,
    dataset                 text not null,      -- sherliic, levy_holt, levy_holt/dirposi_dirnegi, zeichner
    split                   text not null,      -- train, dev, test, all
    item_id                 text not null,
    line_number             integer not null,   -- line of the source file
    premise_path            text,               -- null when the item could not be mapped to a path
    hypothesis_path         text,
    premise_type_a          text,
    premise_type_b          text,
    hypothesis_type_a       text,
    hypothesis_type_b       text,
    is_premise_reversed     boolean,
    is_hypothesis_reversed  boolean,
    premise_text            text,               -- sentence or triple as given
    hypothesis_text         text,
    premise_middle          text,               -- the predicate's words between the arguments
    hypothesis_middle       text,
    label                   boolean not null,   -- true = premise entails hypothesis
    extra                   jsonb not null default '{}'::jsonb,
    primary key (batch_id, item_id)
);
create index if not exists benchmark_items_dataset on raw.benchmark_items (dataset, split);
