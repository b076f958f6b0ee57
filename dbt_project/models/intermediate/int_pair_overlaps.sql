{{ config(pre_hook="{{ heavy_model_settings() }}", post_hook="{{ analyze_table() }}") }}
-- Paper §2.3: A∩B for typed relations A (premise) and B (hypothesis) of different paths, both
-- alignments (see int_relation_overlaps), with |A∩B|, |π1(A∩B)|, |π2(A∩B)| and |π1 ∪ π2| (esr's
-- numerator), all in the premise's orientation. Only overlaps that can pass criteria 2-3 are kept;
-- the acceptance filter re-checks them.
--
-- Scale: the untyped overlap pairs (int_relation_overlaps, already pruned) are first keyed by the
-- typing SET of A and of B that contain them (int_pair_typing_sets: one integer per set of typed
-- relations), unpivoted to their two entities and aggregated per (set of A, set of B, alignment,
-- entity); only those aggregated rows are expanded to the typing pairs (int_typing_set_members).
-- The expansion (≈ |typings of A ∋ (x,y)| · |typings of B ∋ (x,y)| rows per overlap pair, ~20-50 on
-- synthetic graphs) used to run on every overlap pair and entity; now it runs once per distinct
-- (set, set, entity), i.e. entities repeated within a relation pair (hubs) are expanded once.
-- The counts are then ONE two-level aggregation over entities (no count(distinct) sorts):
-- per (A, B, alignment, entity) whether it occurs as arg1 / arg2 and how many pairs it heads;
-- then per (A, B, alignment): |A∩B| = Σ pairs headed, |π1| = #entities seen as arg1, |π2| likewise,
-- |π1 ∪ π2| = #entities. Each overlap pair lies in exactly one (set of A, set of B) group, so the
-- per-set partial sums add up to the per-typing-pair counts.
with

relation_overlaps as (

    select * from {{ ref('int_relation_overlaps') }}

),

-- one import CTE per use (each referenced once): Postgres inlines them and hash-joins the tables
-- directly instead of materialising a CTE copy
premise_typing_sets as (

    select * from {{ ref('int_pair_typing_sets') }}

),

hypothesis_typing_sets as (

    select * from {{ ref('int_pair_typing_sets') }}

),

premise_members as (

    select * from {{ ref('int_typing_set_members') }}

),

hypothesis_members as (

    select * from {{ ref('int_typing_set_members') }}

),

set_joined as (

    select
        premise.typing_set_id as premise_typing_set_id,
        hypothesis.typing_set_id as hypothesis_typing_set_id,
        relation_overlaps.alignment,
        relation_overlaps.arg1_entity_id,
        relation_overlaps.arg2_entity_id

    from relation_overlaps
    inner join premise_typing_sets as premise
        on relation_overlaps.premise_rel_id = premise.rel_id
        and relation_overlaps.arg1_entity_id = premise.arg1_entity_id
        and relation_overlaps.arg2_entity_id = premise.arg2_entity_id
    inner join hypothesis_typing_sets as hypothesis
        on relation_overlaps.hypothesis_rel_id = hypothesis.rel_id
        and relation_overlaps.hypothesis_arg1_entity_id = hypothesis.arg1_entity_id
        and relation_overlaps.hypothesis_arg2_entity_id = hypothesis.arg2_entity_id

),

-- both argument columns unpivoted by a cross join with two sides (set_joined is read once, so
-- Postgres streams it instead of materialising a CTE copy)
sides as (

    select 1 as is_arg1
    union all
    select 0 as is_arg1

),

pair_entities as (

    select
        set_joined.premise_typing_set_id,
        set_joined.hypothesis_typing_set_id,
        set_joined.alignment,
        case when sides.is_arg1 = 1 then set_joined.arg1_entity_id else set_joined.arg2_entity_id end
            as entity_id,
        sides.is_arg1,
        1 - sides.is_arg1 as is_arg2

    from set_joined
    cross join sides

),

set_entity_roles as (

    select
        premise_typing_set_id,
        hypothesis_typing_set_id,
        alignment,
        entity_id,
        sum(is_arg1) as n_pairs_as_arg1,
        max(is_arg1) as seen_as_arg1,
        max(is_arg2) as seen_as_arg2

    from pair_entities
    group by
        premise_typing_set_id,
        hypothesis_typing_set_id,
        alignment,
        entity_id

),

typed_entities as (

    select
        premise_members.typed_rel_id as premise_typed_rel_id,
        hypothesis_members.typed_rel_id as hypothesis_typed_rel_id,
        set_entity_roles.alignment,
        set_entity_roles.entity_id,
        set_entity_roles.n_pairs_as_arg1,
        set_entity_roles.seen_as_arg1,
        set_entity_roles.seen_as_arg2

    from set_entity_roles
    inner join premise_members
        on set_entity_roles.premise_typing_set_id = premise_members.typing_set_id
    inner join hypothesis_members
        on set_entity_roles.hypothesis_typing_set_id = hypothesis_members.typing_set_id

),

entity_roles as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        entity_id,
        sum(n_pairs_as_arg1) as n_pairs_as_arg1,
        max(seen_as_arg1) as seen_as_arg1,
        max(seen_as_arg2) as seen_as_arg2

    from typed_entities
    group by
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        entity_id

),

typed_overlaps as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        sum(n_pairs_as_arg1) as overlap_size,
        sum(seen_as_arg1) as n_overlap_arg1,
        sum(seen_as_arg2) as n_overlap_arg2,
        count(*) as n_overlap_entities

    from entity_roles
    group by
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment
    having sum(n_pairs_as_arg1) >= {{ var('r_min') }}
        and sum(seen_as_arg1) >= {{ var('r_min') }}
        and sum(seen_as_arg2) >= {{ var('r_min') }}

),

final as (

    select
        premise_typed_rel_id,
        hypothesis_typed_rel_id,
        alignment,
        cast(overlap_size as bigint) as overlap_size,
        cast(n_overlap_arg1 as bigint) as n_overlap_arg1,
        cast(n_overlap_arg2 as bigint) as n_overlap_arg2,
        cast(n_overlap_entities as bigint) as n_overlap_entities

    from typed_overlaps

)

select * from final
