-- Sentences supporting an inference candidate: every entity pair of A∩B with the sentences in
-- which the premise's and the hypothesis' relation hold for it (via the relation instances).
--
-- Usage (after `make dbt-run`):
--   .venv/bin/sherliic-db psql -v premise=12 -v hypothesis=34 -v alignment=straight -f sql/supporting_sentences.sql
-- Variables (psql -v or \set): premise, hypothesis = typed_rel_id of the premise / hypothesis
--   (warehouse.inference_candidates), alignment = straight | crossed, limit = max rows (default 50).
-- Without premise/hypothesis/alignment the best-scoring candidate is shown.
\if :{?limit}
\else
\set limit 50
\endif
\if :{?premise}
\else
select
    premise_typed_rel_id as premise,
    hypothesis_typed_rel_id as hypothesis,
    alignment
from warehouse.inference_candidates
order by score desc, premise_typed_rel_id asc, hypothesis_typed_rel_id asc
limit 1
\gset
\endif

with

candidate as (

    select * from warehouse.inference_candidates
    where premise_typed_rel_id = :premise
        and hypothesis_typed_rel_id = :hypothesis
        and alignment = :'alignment'

),

overlap as (

    -- A∩B in the premise's orientation: (x, y) ∈ A with (x, y) ∈ B (straight) or (y, x) ∈ B (crossed)
    select
        candidate.premise_rel_id,
        candidate.hypothesis_rel_id,
        candidate.alignment,
        premise.arg1_entity_id,
        premise.arg2_entity_id
    from candidate
    inner join warehouse.teg_edges as premise
        on candidate.premise_typed_rel_id = premise.typed_rel_id
    inner join warehouse.teg_edges as hypothesis
        on candidate.hypothesis_typed_rel_id = hypothesis.typed_rel_id
        and (
            (
                candidate.alignment = 'straight'
                and premise.arg1_entity_id = hypothesis.arg1_entity_id
                and premise.arg2_entity_id = hypothesis.arg2_entity_id
            )
            or (
                candidate.alignment = 'crossed'
                and premise.arg2_entity_id = hypothesis.arg1_entity_id
                and premise.arg1_entity_id = hypothesis.arg2_entity_id
            )
        )

),

supporting as (

    select
        'premise' as side,
        overlap.arg1_entity_id,
        overlap.arg2_entity_id,
        instances.document_id,
        instances.line_number,
        instances.sentence_text
    from overlap
    inner join warehouse.relation_instances as instances
        on overlap.premise_rel_id = instances.rel_id
        and overlap.arg1_entity_id = instances.arg1_entity_id
        and overlap.arg2_entity_id = instances.arg2_entity_id

    union all

    select
        'hypothesis' as side,
        overlap.arg1_entity_id,
        overlap.arg2_entity_id,
        instances.document_id,
        instances.line_number,
        instances.sentence_text
    from overlap
    inner join warehouse.relation_instances as instances
        on overlap.hypothesis_rel_id = instances.rel_id
        and (
            (
                overlap.alignment = 'straight'
                and overlap.arg1_entity_id = instances.arg1_entity_id
                and overlap.arg2_entity_id = instances.arg2_entity_id
            )
            or (
                overlap.alignment = 'crossed'
                and overlap.arg2_entity_id = instances.arg1_entity_id
                and overlap.arg1_entity_id = instances.arg2_entity_id
            )
        )

)

select
    arg1.entity_name as x,
    arg2.entity_name as y,
    supporting.side,
    supporting.document_id,
    supporting.line_number,
    supporting.sentence_text as sentence
from supporting
inner join warehouse.entities as arg1 on supporting.arg1_entity_id = arg1.entity_id
inner join warehouse.entities as arg2 on supporting.arg2_entity_id = arg2.entity_id
order by x asc, y asc, supporting.side desc, supporting.document_id asc, supporting.line_number asc
limit :limit;
