"""Seedable generator of a synthetic typed event graph (TEG) at SherLIiC scale.

The graph is written straight into the raw schema of a Postgres warehouse as one load batch of the
batch store (kind 'corpus', format 'synthetic', corpus 'synthetic') with COPY, in chunks, so 20M+
relation instances never sit in a Python list.

Shape of the graph (all distributions seeded, numpy vectorised):
- a FIGER-like type inventory of ~40 types (coarse types and fine subtypes); every entity gets one
  coarse type (Zipf-ish weights) plus a few of its fine subtypes; a small share stays untyped (τ = ∅);
- relations are canonical dependency paths (`nsubj^-___rel123___dobj` and a few other templates that
  pass the Appendix A filters) with a coarse type signature; relation sizes are Zipf over relation rank;
- arguments are drawn Zipf within the signature's entity pool, half from a global popularity order
  (the hub pairs every large relation shares) and half from a relation-specific rotation of it;
- planted entailments: premise relation A copies a share of its entity pairs into hypothesis B, either
  straight (B(x,y)) or crossed (B(y,x), B gets the swapped signature), so that inference candidates
  exist at the paper's default thresholds.

CLI: `python -m benchmarks.synthetic_teg --instances N --relations M --seed S [--database-url URL]`.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

import click
import numpy as np
from tqdm import tqdm

from extract.batches.store import BatchClaim, BatchWriter, PostgresBatchWriter, open_batch_store
from warehouse.command_line import CONTEXT, run, target_options, version_option
from warehouse.errors import ConfigurationError
from warehouse.target import Target

GENERATOR_VERSION = 1
TYPE_SOURCE = "synthetic"

# Coarse type -> fine subtypes (FIGER-like names); coarse weights are entity shares.
TYPE_TREE: dict[str, tuple[float, list[str]]] = {
    "/person": (
        0.34,
        [
            "politician",
            "athlete",
            "actor",
            "author",
            "musician",
            "business_person",
            "scientist",
            "military_person",
        ],
    ),
    "/organization": (
        0.18,
        [
            "company",
            "sports_team",
            "government_agency",
            "educational_institution",
            "political_party",
            "news_agency",
        ],
    ),
    "/location": (0.20, ["city", "country", "province", "body_of_water", "island", "county"]),
    "/art": (0.07, ["film", "written_work", "music"]),
    "/product": (0.05, ["software", "car", "weapon"]),
    "/event": (0.05, ["military_conflict", "election", "sports_event"]),
    "/building": (0.03, ["airport", "hospital"]),
    "/disease": (0.03, []),
    "/award": (0.02, []),
    "/language": (0.02, []),
    "/religion": (0.01, []),
}
# Path templates in canonical orientation (subject end on the left); {l} is the relation's lemma.
PATH_TEMPLATES = (
    "nsubj^-___{l}___dobj",
    "nsubj^-___{l}___prep___in___pobj",
    "nsubjpass^-___{l}___prep___by___pobj",
    "nsubj^-___{l}___prep___with___pobj",
    "nsubj^-___{l}___xcomp___be___dobj",
    "nsubj^-___{l}___iobj",
    "nsubj^-___{l}___poss",
    "nsubjpass^-___{l}___prep___to___pobj",
)


def type_inventory() -> list[str]:
    """All type names: every coarse type and its fine subtypes (`/person/politician`)."""
    names: list[str] = []
    for coarse, (_, fines) in TYPE_TREE.items():
        names.append(coarse)
        names.extend(f"{coarse}/{fine}" for fine in fines)
    return names


@dataclass
class GeneratorConfig:
    n_instances: int = 20_000_000
    n_relations: int = 190_000
    seed: int = 0
    n_entities: int | None = None  # default: n_instances // 8 (at least 200)
    # Calibrated so that 20M instances over 190k relations give ≈190k typed relations at k = r_min = 5.
    relation_zipf: float = 1.4  # exponent of relation size vs rank
    entity_zipf: float = 1.2  # exponent of entity popularity within its type pool
    global_share: float = 0.7  # arguments drawn from the global (hub) popularity order
    untyped_share: float = 0.05  # entities without any type
    planted_share: float = 0.01  # planted entailing pairs per relation
    planted_copy: float = 0.6  # share of the premise's instances copied into the hypothesis
    chunk_size: int = 1_000_000
    extra: dict = field(default_factory=dict)

    @property
    def entities(self) -> int:
        return self.n_entities or max(200, self.n_instances // 8)

    def checksum(self) -> str:
        payload = json.dumps({"version": GENERATOR_VERSION, **asdict(self)}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class GeneratorSummary:
    batch_id: int | None
    n_instances: int
    n_relations_used: int
    n_entities: int
    n_entity_type_rows: int
    n_planted_straight: int
    n_planted_crossed: int
    n_distinct_relation_pairs: int  # distinct (relation, arg1, arg2)
    n_entity_pairs: int  # distinct (arg1, arg2)
    hub_tail_sum_n2: int  # Σ over entity pairs of n², n = relations per pair
    max_relations_per_pair: int
    seconds: float
    skipped: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


def _zipf_cdf(n: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** exponent
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


class TegGenerator:
    """Builds the static parts (entities, types, relations) and streams instance chunks."""

    def __init__(self, config: GeneratorConfig) -> None:
        self.config = config
        rng = np.random.default_rng(config.seed)
        self.rng = rng
        n_ent = config.entities
        coarse = list(TYPE_TREE)
        weights = np.array([TYPE_TREE[c][0] for c in coarse])
        weights /= weights.sum()
        self.coarse_names = coarse
        # Entity -> coarse type; entity ids are grouped per coarse pool and shuffled inside each pool.
        ent_coarse = rng.choice(len(coarse), size=n_ent, p=weights)
        self.entity_coarse = ent_coarse
        self.pools = [np.flatnonzero(ent_coarse == c) for c in range(len(coarse))]
        for pool in self.pools:
            rng.shuffle(pool)
        self.pool_cdfs = [_zipf_cdf(max(len(p), 1), config.entity_zipf) for p in self.pools]
        # Types: coarse type plus each fine subtype j with probability 0.6/(j+1) (a few types each).
        self.entity_types: list[list[str]] = []
        untyped = rng.random(n_ent) < config.untyped_share
        for e in range(n_ent):
            if untyped[e]:
                self.entity_types.append([])
                continue
            c = coarse[ent_coarse[e]]
            fines = TYPE_TREE[c][1]
            picks = [c]
            if fines:
                draws = rng.random(len(fines))
                picks.extend(f"{c}/{f}" for j, f in enumerate(fines) if draws[j] < 0.6 / (j + 1))
            self.entity_types.append(picks)
        # Relations: signature (coarse slot-1, coarse slot-2), path, rotation of the pool order.
        m = config.n_relations
        subj_w = weights.copy()
        subj_w[:3] *= 2.0  # subjects are mostly persons, organizations, locations
        subj_w /= subj_w.sum()
        self.sig1 = rng.choice(len(coarse), size=m, p=subj_w)
        self.sig2 = rng.choice(len(coarse), size=m, p=weights)
        self.sig2 = np.where(self.sig2 == self.sig1, rng.choice(len(coarse), size=m, p=weights), self.sig2)
        self.rotation = rng.integers(0, 2**31, size=m)
        self.relation_cdf = _zipf_cdf(m, config.relation_zipf)
        # Planted entailments: premise ranks in the middle of the size distribution.
        n_planted = int(m * config.planted_share)
        lo, hi = min(20, m - 1), max(min(m // 3, m - 1), min(21, m))
        premises = rng.choice(np.arange(lo, hi), size=min(n_planted, hi - lo), replace=False)
        self.plant_target = np.full(m, -1, dtype=np.int64)
        self.plant_crossed = np.zeros(m, dtype=bool)
        taken = set(premises.tolist())
        for a in premises.tolist():
            b = int(rng.integers(0, m))
            while b in taken:
                b = int(rng.integers(0, m))
            taken.add(b)
            crossed = bool(rng.random() < 0.5)
            self.plant_target[a] = b
            self.plant_crossed[a] = crossed
            # The hypothesis gets the premise's signature (swapped when crossed).
            s1, s2 = self.sig1[a], self.sig2[a]
            self.sig1[b], self.sig2[b] = (s2, s1) if crossed else (s1, s2)
        self.n_planted_crossed = int(self.plant_crossed[premises].sum()) if len(premises) else 0
        self.n_planted_straight = len(premises) - self.n_planted_crossed
        self.paths = [relation_path(r) for r in range(m)]
        self.entity_ids = [entity_id(e) for e in range(n_ent)]

    def _draw_args(self, rels: np.ndarray, sig: np.ndarray) -> np.ndarray:
        """One argument per instance: Zipf rank in the signature's pool, global or rotated order."""
        rng = self.rng
        out = np.empty(len(rels), dtype=np.int64)
        use_global = rng.random(len(rels)) < self.config.global_share
        for c, pool in enumerate(self.pools):
            mask = sig == c
            k = int(mask.sum())
            if not k:
                continue
            if len(pool) == 0:
                raise ValueError(f"no entities of type {self.coarse_names[c]}: use more entities")
            ranks = np.searchsorted(self.pool_cdfs[c], rng.random(k), side="right")
            ranks = np.minimum(ranks, len(pool) - 1)
            rotated = (ranks + self.rotation[rels[mask]]) % len(pool)
            out[mask] = pool[np.where(use_global[mask], ranks, rotated)]
        return out

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(relation, arg1, arg2) arrays, chunk by chunk, n_instances in total."""
        remaining = self.config.n_instances
        rng = self.rng
        while remaining > 0:
            n = min(self.config.chunk_size, remaining)
            rels = np.searchsorted(self.relation_cdf, rng.random(n), side="right")
            rels = np.minimum(rels, self.config.n_relations - 1)
            a1 = self._draw_args(rels, self.sig1[rels])
            a2 = self._draw_args(rels, self.sig2[rels])
            same = a1 == a2
            while same.any():  # an instance links two distinct entities
                a2[same] = self._draw_args(rels[same], self.sig2[rels[same]])
                same = a1 == a2
            # Planted copies: premise instance (x,y) also yields B(x,y) or, crossed, B(y,x).
            targets = self.plant_target[rels]
            copy = (targets >= 0) & (rng.random(n) < self.config.planted_copy)
            crossed = self.plant_crossed[rels[copy]]
            c1 = np.where(crossed, a2[copy], a1[copy])
            c2 = np.where(crossed, a1[copy], a2[copy])
            rels = np.concatenate([rels, targets[copy]])
            a1 = np.concatenate([a1, c1])
            a2 = np.concatenate([a2, c2])
            # Interleave copies with base instances and keep exactly n (a random share of both).
            order = rng.permutation(len(rels))[:n]
            remaining -= n
            yield rels[order], a1[order], a2[order]


def relation_path(r: int) -> str:
    """Canonical path of relation r (distinct lemma per relation, so every path is distinct)."""
    return PATH_TEMPLATES[r % len(PATH_TEMPLATES)].format(l=f"rel{r}")


def entity_id(e: int) -> str:
    return f"/m/0{e:x}"


def _hub_tail(keys: list[np.ndarray], n_ent: int) -> tuple[int, int, int, int]:
    """Distinct (relation, pair) and pairs; Σ n² and max n over pairs (n = relations per pair)."""
    allkeys = np.unique(np.concatenate(keys))
    pairs = allkeys % (n_ent * n_ent)
    _, counts = np.unique(pairs, return_counts=True)
    counts = counts.astype(np.int64)
    return len(allkeys), len(counts), int((counts * counts).sum()), int(counts.max(initial=0))


def generate(
    target: Target,
    config: GeneratorConfig,
    *,
    replace: bool = False,
    progress: bool = True,
) -> GeneratorSummary:
    """Generate the graph and load it as one batch of the Target's Postgres warehouse; skip when the same
    config is already loaded (``replace``: load it again in place of that batch)."""
    if target.engine != "postgres":
        raise ConfigurationError(
            f"the synthetic graph is loaded into Postgres; the target is {target.describe()}"
        )
    start = time.perf_counter()
    n_ent = config.entities
    if config.n_relations * n_ent * n_ent >= 2**63:
        raise ValueError("relations × entities² must fit in int64 (hub-tail bookkeeping)")
    claim = BatchClaim(
        path=f"synthetic:seed={config.seed}",
        fmt="synthetic",
        kind="corpus",
        checksum=config.checksum(),
        options=asdict(config),
        corpus="synthetic",
        replace=replace,
        # a source names a seed, not one file: graphs of other shapes with the same seed load beside it
        by_path=False,
    )
    written: dict = {}

    def write(writer: BatchWriter) -> dict[str, int]:
        written.update(_write_graph(writer, config, progress))
        return {"instances": config.n_instances, "rows": written["n_entity_type_rows"]}

    with open_batch_store(target) as store:
        batch = store.load(claim, write)
    if batch.skipped:
        return GeneratorSummary(batch.batch_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, skipped=True)
    return GeneratorSummary(
        batch_id=batch.batch_id,
        n_instances=config.n_instances,
        n_entities=n_ent,
        seconds=round(time.perf_counter() - start, 2),
        **written,
    )


def _write_graph(writer: BatchWriter, config: GeneratorConfig, progress: bool) -> dict[str, int]:
    """COPY the graph's entities, types and instances into the batch (its transaction); the summary's
    counts of what was written."""
    if not isinstance(writer, PostgresBatchWriter):
        raise ConfigurationError("the synthetic graph is written with Postgres COPY")
    conn, batch_id = writer.connection, writer.batch_id
    gen = TegGenerator(config)
    n_ent = config.entities
    if conn.execute("select rolsuper from pg_roles where rolname = current_user").fetchone()[0]:
        # Bulk load: skip the per-row foreign-key triggers for this transaction only. Safe here:
        # every row references the batch the store inserted, in the same transaction.
        conn.execute("set local session_replication_role = replica")
    with conn.cursor() as cur:
        with cur.copy("copy raw.entities (batch_id, entity_id, entity_name) from stdin") as copy:
            copy.write("".join(f"{batch_id}\t{gen.entity_ids[e]}\tEntity {e}\n" for e in range(n_ent)))
        types_copy = "copy raw.entity_types (batch_id, entity_id, type_name, type_source) from stdin"
        with cur.copy(types_copy) as copy:
            lines = []
            for e, types in enumerate(gen.entity_types):
                for t in types:
                    lines.append(f"{batch_id}\t{gen.entity_ids[e]}\t{t}\t{TYPE_SOURCE}\n")
            n_type_rows = len(lines)
            copy.write("".join(lines))
        keys: list[np.ndarray] = []
        paths, ents = gen.paths, gen.entity_ids
        bar = tqdm(total=config.n_instances, unit="inst", disable=not progress, desc="instances")
        with cur.copy(
            "copy raw.relation_instances (batch_id, path, arg1_entity_id, arg2_entity_id, subject_side) "
            "from stdin"
        ) as copy:
            for rels, a1, a2 in gen.chunks():
                keys.append(np.unique((rels * n_ent + a1) * n_ent + a2))
                side = (rels + a1 + a2) % 2 + 1  # which mention came first: irrelevant to the TEG
                prefix = f"{batch_id}\t"
                copy.write(
                    "".join(
                        f"{prefix}{paths[r]}\t{ents[x]}\t{ents[y]}\t{s}\n"
                        for r, x, y, s in zip(
                            rels.tolist(), a1.tolist(), a2.tolist(), side.tolist(), strict=True
                        )
                    )
                )
                bar.update(len(rels))
        bar.close()
    n_rel_pairs, n_pairs, sum_n2, max_n = _hub_tail(keys, n_ent)
    return {
        "n_relations_used": len(np.unique(np.concatenate(keys) // (n_ent * n_ent))),
        "n_entity_type_rows": n_type_rows,
        "n_planted_straight": gen.n_planted_straight,
        "n_planted_crossed": gen.n_planted_crossed,
        "n_distinct_relation_pairs": n_rel_pairs,
        "n_entity_pairs": n_pairs,
        "hub_tail_sum_n2": sum_n2,
        "max_relations_per_pair": max_n,
    }


def shape_options(function: Callable) -> Callable:
    """The generator's shape options (relations, seed, Zipf exponents, hub share): this CLI's and
    `make bench-candidates`'."""
    options = [
        click.option(
            "--relations",
            type=int,
            default=GeneratorConfig.n_relations,
            show_default=True,
            help="Relations (paths).",
        ),
        click.option("--seed", type=int, default=0, show_default=True, help="Generator seed."),
        click.option(
            "--relation-zipf",
            type=float,
            default=GeneratorConfig.relation_zipf,
            show_default=True,
            help="Exponent of relation size vs rank.",
        ),
        click.option(
            "--entity-zipf",
            type=float,
            default=GeneratorConfig.entity_zipf,
            show_default=True,
            help="Larger = heavier hub tail (Σn²).",
        ),
        click.option(
            "--global-share",
            type=float,
            default=GeneratorConfig.global_share,
            show_default=True,
            help="Share of arguments from the global popularity order (hubs).",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


@click.command(context_settings=CONTEXT)
@version_option
@click.option(
    "--instances", type=int, default=GeneratorConfig.n_instances, show_default=True, help="Instances."
)
@click.option("--entities", type=int, default=None, help="Default: instances // 8 (at least 200).")
@shape_options
@click.option("--replace", is_flag=True, help="Replace a batch with the same settings.")
@target_options()
def cli(
    instances: int,
    relations: int,
    entities: int | None,
    seed: int,
    relation_zipf: float,
    entity_zipf: float,
    global_share: float,
    replace: bool,
    target: Target,
) -> None:
    """Generate a synthetic typed event graph and COPY it into the raw schema.

    One load batch (source format 'synthetic'); prints its summary as JSON."""
    config = GeneratorConfig(
        n_instances=instances,
        n_relations=relations,
        seed=seed,
        n_entities=entities,
        relation_zipf=relation_zipf,
        entity_zipf=entity_zipf,
        global_share=global_share,
    )
    summary = generate(target, config, replace=replace)
    print(json.dumps(summary.as_dict(), indent=2))


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="python -m benchmarks.synthetic_teg")


if __name__ == "__main__":
    sys.exit(main())
