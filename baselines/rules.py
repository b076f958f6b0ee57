"""Rule-collection baselines (paper §4, Table 3): Berant I, Berant II, PPDB, Patty, Schoenmackers, Chirps,
All Rules. Loaders and lookups follow the original SherLIiC code; all are non-tunable (0/1 scores).

Lookup key of a path (`db_form`, as the original `path2dbformat`): its lemmas joined by spaces, with "be"
prepended when the path starts with nsubjpass and appended when it ends with nsubjpass(^-), the word
list reversed for reversed relations. A rule applies when its inversion flag equals
(premise reversed != hypothesis reversed).

Resources: Berant I/II and PPDB-XL come from the shared data folder; Patty, Schoenmackers and Chirps are
not obtainable offline, so their loaders read the published formats from files named by environment
variables (SHERLIIC_PATTY_PATTERNS + SHERLIIC_PATTY_SUBSUMPTIONS, SHERLIIC_SCHOENMACKERS, SHERLIIC_CHIRPS)
or from `rules/{patty,schoenmackers,chirps}/` in the shared folder, and the baseline is skipped with a
clear message (ResourceMissing) when they are absent. The variables (RESOURCE_VARIABLES, also one per
shared-folder file) are read once at a command's edge (evaluation.context.resource_files) into the Context.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

import pandas as pd

from baselines.lemma import is_passive, lemma_rule, path_lemmas, predicate_lemma, stopwords
from evaluation.context import RESOURCE_VARIABLES
from evaluation.registry import Context, ResourceMissing, get, register
from warehouse.errors import InputError

INTERPUNCTION = frozenset([",", ".", "?", "!", ":", "'", '"', ";", "-", "_"])


def db_form(path: str, reversed_: bool) -> str:
    """The original `path2dbformat`: lemmas (+ "be" at passive ends), reversed for reversed relations."""
    words = path_lemmas(path)
    if path.startswith("nsubjpass"):
        words.insert(0, "be")
    if path.endswith("nsubjpass") or path.endswith("nsubjpass^-"):
        words.append("be")
    if reversed_:
        words.reverse()
    return " ".join(words)


def _resource(ctx: Context, env: str, relative: str) -> Path:
    """A resource file: the one the env variable named (Context.resource_files), else the shared data
    folder's; ResourceMissing if absent."""
    if env not in RESOURCE_VARIABLES:
        raise KeyError(f"{env} is not one of RESOURCE_VARIABLES")
    if ctx.resource_files.get(env):
        path = Path(ctx.resource_files[env])
    elif ctx.shared_data:
        path = Path(ctx.shared_data) / relative
    else:
        raise ResourceMissing(f"no shared data folder and ${env} unset; cannot find {relative}")
    if not path.is_file():
        raise ResourceMissing(f"resource file {path} not found (set ${env} to the published file)")
    return path


def _cached(ctx: Context, key: str, loader, *args):
    if key not in ctx.cache:
        ctx.cache[key] = loader(*args)
    return ctx.cache[key]


def _apply(items: pd.DataFrame, rule) -> pd.Series:
    """0/1 per item from rule(prem_path, hypo_path, prem_rev, hypo_rev, row); NaN when a path is missing."""
    out = []
    for row in items.itertuples(index=False):
        p, h = row.premise_path, row.hypothesis_path
        if not (isinstance(p, str) and isinstance(h, str)):
            out.append(float("nan"))
            continue
        out.append(float(rule(p, h, bool(row.is_premise_reversed), bool(row.is_hypothesis_reversed), row)))
    return pd.Series(out, index=items.index, dtype=float)


# ---------------------------------------------------------------- Berant I


def load_berant_i(path: str | Path) -> dict[tuple[str, str], list[bool]]:
    """`<pred::t1::t2> (->|-R>) <pred::t1::t2>` lines -> {(premise, hypothesis): [inverted, ...]}.

    As in the original code a rule counts as inverted when its edge is `-R>` or when the premise's
    types are distinct and its first type is the hypothesis' second type.
    """
    graph: dict[tuple[str, str], list[bool]] = defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or parts[1] not in ("->", "-R>"):
                raise InputError(str(path), lineno, "expected `<pred::t1::t2><TAB>->|-R><TAB><pred::t1::t2>`")
            prem, edge, hypo = parts
            try:
                pr_pred, pr_t1, pr_t2 = prem.strip()[1:-1].split("::")
                hy_pred, _hy_t1, hy_t2 = hypo.strip()[1:-1].split("::")
            except ValueError:
                raise InputError(str(path), lineno, f"bad typed predicate in {line.strip()!r}") from None
            inverted = edge == "-R>" or (pr_t1 != pr_t2 and pr_t1 == hy_t2)
            graph[(pr_pred, hy_pred)].append(inverted)
    return dict(graph)


@register("Berant I", tunable=False, description="Berant et al. (2011) typed rules, types ignored in lookup")
def berant_i_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    file = _resource(ctx, "SHERLIIC_BERANT_I", "rules/berant2011/original-edgelist.txt")
    graph = _cached(ctx, "berant_i", load_berant_i, file)

    def rule(p, h, rp, rh, _row):
        flags = graph.get((db_form(p, rp), db_form(h, rh)))
        return bool(flags) and (rp != rh) in flags

    return _apply(items, rule)


# ---------------------------------------------------------------- Berant II


def _lemmatize_be_phrase(phrase: str) -> str:
    """The original lemmatizes the word after a leading "be" as a verb (WordNet); lemminflect here."""
    from lemminflect import getLemma

    words = phrase.split()
    if len(words) > 1 and words[0] == "be":
        lemmas = getLemma(words[1], upos="VERB")
        if lemmas:
            words[1] = lemmas[0]
    return " ".join(words)


def load_berant_ii(path: str | Path, threshold: float = 0.0) -> set[tuple[str, str, bool]]:
    """ReVerb rules: `prem<TAB>hypo[<TAB>score]`, `@R@` = arguments reversed -> {(prem, hypo, inverted)}.

    The global files have no score column (every rule kept); with a score, rules below `threshold`
    are dropped (the local file's recommended threshold is 0).
    """
    rules: set[tuple[str, str, bool]] = set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) not in (2, 3):
                raise InputError(str(path), lineno, "expected `premise<TAB>hypothesis[<TAB>score]`")
            if len(parts) == 3:
                try:
                    if float(parts[2]) < threshold:
                        continue
                except ValueError:
                    raise InputError(str(path), lineno, f"score {parts[2]!r} is not a number") from None
            prem, hypo = parts[0], parts[1]
            prem_inv, hypo_inv = prem.endswith("@R@"), hypo.endswith("@R@")
            prem, hypo = prem.removesuffix("@R@"), hypo.removesuffix("@R@")
            rules.add((_lemmatize_be_phrase(prem), _lemmatize_be_phrase(hypo), prem_inv != hypo_inv))
    return rules


@register(
    "Berant II",
    tunable=False,
    description="Berant (2012) ReVerb rules; the available GLOBAL TNCF lambda=0.1 file (unscored), "
    "not the local scored file the paper used",
)
def berant_ii_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    file = _resource(
        ctx, "SHERLIIC_BERANT_II", "rules/berant_reverb/reverb_global_clsf_all_tncf_lambda_0.1.txt"
    )
    rules = _cached(ctx, "berant_ii", load_berant_ii, file)
    return _apply(items, lambda p, h, rp, rh, _r: (db_form(p, rp), db_form(h, rh), rp != rh) in rules)


# ---------------------------------------------------------------- PPDB (crude substitute)


def load_ppdb_lexicon(path: str | Path) -> dict[str, frozenset[str]]:
    """PPDB-XL lexicon as distributed with retrofitting: `word para1 para2 ...` per line."""
    lex: dict[str, set[str]] = defaultdict(set)
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if len(words) < 2:
                continue
            head, paras = words[0], words[1:]
            lex[head].update(paras)
            for para in paras:  # paraphrase is symmetric; the lexicon lists each pair once
                lex[para].add(head)
    return {w: frozenset(p) for w, p in lex.items()}


def ppdb_rule(premise: str, hypothesis: str, rp: bool, rh: bool, lexicon: dict[str, frozenset[str]]) -> bool:
    """Lemma with PPDB-XL lexical paraphrases: a crude substitute for the paper's PPDB 2.0 phrase rules.

    Yes iff (a) the predicate lemmas are equal or PPDB-XL paraphrases, (b) every non-stopword lemma of
    the hypothesis is in the premise or is a paraphrase of a premise lemma, (c) Lemma's voice/inversion
    criterion holds.
    """

    def same_or_para(a: str, b: str) -> bool:
        return a == b or b in lexicon.get(a, ()) or a in lexicon.get(b, ())

    prem_lemmas = path_lemmas(premise)
    stop = stopwords()
    if not same_or_para(predicate_lemma(premise, rp), predicate_lemma(hypothesis, rh)):
        return False
    for w in path_lemmas(hypothesis):
        if w in stop or w in prem_lemmas:
            continue
        if not any(same_or_para(w, pw) for pw in prem_lemmas):
            return False
    return (is_passive(premise) == is_passive(hypothesis)) == (rp == rh)


@register(
    "PPDB",
    tunable=False,
    description="crude substitute: Lemma with PPDB-XL lexical paraphrases (not PPDB 2.0 phrase rules)",
)
def ppdb_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    lexicon = _cached(
        ctx, "ppdb", load_ppdb_lexicon, _resource(ctx, "SHERLIIC_PPDB", "rules/ppdb/ppdb-xl.txt")
    )
    return _apply(items, lambda p, h, rp, rh, _r: ppdb_rule(p, h, rp, rh, lexicon))


# ---------------------------------------------------------------- Patty


def load_patty(pattern_file: str | Path, subsumption_file: str | Path):
    """PATTY's published TSVs (with header): patterns `id, text, confidence, domain, range`
    (pattern variants separated by `;$`, `[[type]]` placeholders) and subsumptions
    `superpattern, subpattern, confidence`. Returns (regex per pattern id, {sub id: [super ids]})."""
    patterns: dict[int, re.Pattern] = {}
    with open(pattern_file, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t")
        next(reader, None)
        for row in reader:
            if not row:
                continue
            if len(row) != 5:
                raise InputError(str(pattern_file), reader.line_num, f"expected 5 columns, got {len(row)}")
            try:
                pid = int(row[0])
            except ValueError:
                raise InputError(str(pattern_file), reader.line_num, f"pattern id {row[0]!r}") from None
            variants = [v for v in row[1].split(";$") if v.strip()]
            # as the original: the pattern text is used as a regex, `[[type]]` slots become \S+
            alts = ["(?:" + re.sub(r"\[\[[^]]+\]\]", r"\\S+", v.strip()) + ")" for v in variants]
            patterns[pid] = re.compile("|".join(alts))
    subsumptions: dict[int, list[int]] = defaultdict(list)
    with open(subsumption_file, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t")
        next(reader, None)
        for row in reader:
            if not row:
                continue
            if len(row) != 3:
                raise InputError(
                    str(subsumption_file), reader.line_num, f"expected 3 columns, got {len(row)}"
                )
            try:
                subsumptions[int(row[1])].append(int(row[0]))
            except ValueError:
                raise InputError(
                    str(subsumption_file), reader.line_num, "pattern ids must be integers"
                ) from None
    return patterns, dict(subsumptions)


def patty_rule(prem_middle: str, hypo_middle: str, rp: bool, rh: bool, patty) -> bool:
    """A premise pattern matches the premise's middle text and one of its superpatterns the hypothesis'.
    As in the original, unaligned arguments (rp != rh) never match."""
    patterns, subsumptions = patty
    if rp != rh or not prem_middle or not hypo_middle:
        return False
    for pid, regex in patterns.items():
        if regex.search(prem_middle):
            for sup in subsumptions.get(pid, ()):
                if sup in patterns and patterns[sup].search(hypo_middle):
                    return True
    return False


@register("Patty", tunable=False, description="PATTY pattern subsumptions (Nakashole et al. 2012)")
def patty_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    pat = _resource(ctx, "SHERLIIC_PATTY_PATTERNS", "rules/patty/wikipedia-patterns.txt")
    sub = _resource(ctx, "SHERLIIC_PATTY_SUBSUMPTIONS", "rules/patty/wikipedia-subsumptions.txt")
    patty = _cached(ctx, "patty", load_patty, pat, sub)
    return _apply(
        items,
        lambda p, h, rp, rh, r: patty_rule(
            getattr(r, "premise_middle", None) or "",
            getattr(r, "hypothesis_middle", None) or "",
            rp,
            rh,
            patty,
        ),
    )


# ---------------------------------------------------------------- Schoenmackers (Sherlock rules)

_SCHOENMACKERS_RE = re.compile(
    r'rule\s*"\s*'
    r"([^(]+)\([^_]+_([AB]), [^_]+_([AB])\)"
    r"\s*:-\s*([^(]+)\([^_]+_([AB]), [^_]+_([AB])\)"
    r"[^0-9]*?([0-9]+\.[0-9]+)"
)


def load_schoenmackers(path: str | Path) -> set[tuple[str, str, bool]]:
    """Sherlock Horn clauses `rule "head(t_A, t_B) :- body(t_A, t_B)" ... score`
    -> {(body, head, aligned)}."""
    rules: set[tuple[str, str, bool]] = set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            m = _SCHOENMACKERS_RE.match(line)
            if m is None:
                raise InputError(
                    str(path), lineno, 'expected `rule "head(t_A, t_B) :- body(t_A, t_B)" score`'
                )
            hypo = " ".join(w for w in m.group(1).split() if w not in INTERPUNCTION)
            prem = " ".join(w for w in m.group(4).split() if w not in INTERPUNCTION)
            if (m.group(2) == m.group(5)) != (m.group(3) == m.group(6)):
                raise InputError(str(path), lineno, "head and body must share both variables")
            rules.add((prem, hypo, m.group(2) == m.group(5)))
    return rules


@register(
    "Schoenmackers", tunable=False, description="Sherlock Horn-clause rules (Schoenmackers et al. 2010)"
)
def schoenmackers_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    rules = _cached(
        ctx,
        "schoenmackers",
        load_schoenmackers,
        _resource(ctx, "SHERLIIC_SCHOENMACKERS", "rules/schoenmackers/sherlockrules.all.txt"),
    )
    return _apply(items, lambda p, h, rp, rh, _r: (db_form(p, rp), db_form(h, rh), rp == rh) in rules)


# ---------------------------------------------------------------- Chirps


def load_chirps(path: str | Path) -> set[tuple[str, str, bool]]:
    """Chirps paraphrase TSV (first two columns `{a0} pattern {a1}`); only patterns with placeholders at
    both ends, as SherLIiC relations -> {(pattern1, pattern2, inverted)}."""
    store: set[tuple[str, str, bool]] = set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = line.strip().split("\t")
            if len(row) < 2:
                raise InputError(str(path), lineno, "expected at least 2 tab-separated columns")
            a, b = row[0], row[1]
            if a.startswith("{") and a.endswith("}") and b.startswith("{") and b.endswith("}"):
                same = (a.startswith("{a0}") and b.startswith("{a0}")) or (
                    a.startswith("{a1}") and b.startswith("{a1}")
                )
                store.add((" ".join(a.split()[1:-1]), " ".join(b.split()[1:-1]), not same))
    return store


@register(
    "Chirps", tunable=False, description="Chirps predicate paraphrases (Shwartz et al. 2017), symmetric"
)
def chirps_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    store = _cached(ctx, "chirps", load_chirps, _resource(ctx, "SHERLIIC_CHIRPS", "rules/chirps/rules.tsv"))

    def rule(p, h, rp, rh, _r):
        pf, hf, inv = db_form(p, rp), db_form(h, rh), rp != rh
        return (pf, hf, inv) in store or (hf, pf, inv) in store

    return _apply(items, rule)


# ---------------------------------------------------------------- All Rules

ALL_RULE_BASELINES = ("Berant I", "Berant II", "Schoenmackers", "Chirps", "PPDB", "Patty")


@register("All Rules", tunable=False, description="union of Lemma and every available rule collection")
def all_rules_score(items: pd.DataFrame, ctx: Context) -> pd.Series:
    lemma = _apply(items, lambda p, h, rp, rh, _r: lemma_rule(p, h, rp, rh))
    total = lemma.fillna(0.0)
    used = []
    for name in ALL_RULE_BASELINES:
        try:
            scores = get(name).score(items, ctx)
        except ResourceMissing:
            continue
        used.append(name)
        total = total.combine(scores.fillna(0.0), max)
    ctx.cache["all_rules_used"] = ["Lemma", *used]
    return total.where(lemma.notna(), float("nan"))
