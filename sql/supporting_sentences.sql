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
select premise_typed_rel_id as premise, hypothesis_typed_rel_id as hypothesis, alignment
from warehouse.inference_candidates
order by score desc, premise_typed_rel_id, hypothesis_typed_rel_id
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
        on premise.typed_rel_id = candidate.premise_typed_rel_id
    inner join warehouse.teg_edges as hypothesis
        on hypothesis.typed_rel_id = candidate.hypothesis_typed_rel_id
        and (
            (candidate.alignment = 'straight'
                and hypothesis.arg1_entity_id = premise.arg1_entity_id
                and hypothesis.arg2_entity_id = premise.arg2_entity_id)
            or (candidate.alignment = 'crossed'
                and hypothesis.arg1_entity_id = premise.arg2_entity_id
                and hypothesis.arg2_entity_id = premise.arg1_entity_id)
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
        on instances.rel_id = overlap.premise_rel_id
        and instances.arg1_entity_id = overlap.arg1_entity_id
        and instances.arg2_entity_id = overlap.arg2_entity_id

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
        on instances.rel_id = overlap.hypothesis_rel_id
        and (
            (overlap.alignment = 'straight'
                and instances.arg1_entity_id = overlap.arg1_entity_id
                and instances.arg2_entity_id = overlap.arg2_entity_id)
            or (overlap.alignment = 'crossed'
                and instances.arg1_entity_id = overlap.arg2_entity_id
                and instances.arg2_entity_id = overlap.arg1_entity_id)
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
inner join warehouse.entities as arg1 on arg1.entity_id = supporting.arg1_entity_id
inner join warehouse.entities as arg2 on arg2.entity_id = supporting.arg2_entity_id
order by x, y, supporting.side desc, supporting.document_id, supporting.line_number
limit :limit;
