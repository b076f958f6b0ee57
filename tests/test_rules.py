"""Rule-collection baselines on tiny hand-written resource files in their published formats."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from baselines import rules
from deppath.paths import is_reversed
from evaluation.context import RESOURCE_VARIABLES, resource_files
from evaluation.evaluate import evaluate_many
from evaluation.registry import Context
from warehouse.errors import InputError

FIX = Path(__file__).parent / "fixtures" / "rules"


def _items(pairs, middles=None) -> pd.DataFrame:
    rows = []
    for k, (p, h) in enumerate(pairs):
        pm, hm = middles[k] if middles else (None, None)
        rows.append(
            {
                "item_id": f"i{k}",
                "dataset": "toy",
                "split": "all",
                "premise_path": p,
                "hypothesis_path": h,
                "is_premise_reversed": is_reversed(p),
                "is_hypothesis_reversed": is_reversed(h),
                "premise_middle": pm,
                "hypothesis_middle": hm,
                "label": True,
            }
        )
    return pd.DataFrame(rows)


RULE_FILES = {
    "SHERLIIC_BERANT_I": "berant_i.txt",
    "SHERLIIC_BERANT_II": "berant_ii.txt",
    "SHERLIIC_PPDB": "ppdb.txt",
    "SHERLIIC_PATTY_PATTERNS": "patty_patterns.txt",
    "SHERLIIC_PATTY_SUBSUMPTIONS": "patty_subsumptions.txt",
    "SHERLIIC_SCHOENMACKERS": "schoenmackers.txt",
    "SHERLIIC_CHIRPS": "chirps.tsv",
}


@pytest.fixture()
def ctx() -> Context:
    """The rule files named by the environment variables, read as a command reads them at its edge."""
    environ = {"PATH": "/bin", **{env: str(FIX / name) for env, name in RULE_FILES.items()}}
    return Context(shared_data=None, resource_files=resource_files(environ))


def test_resource_files_are_read_from_the_given_environment_only(monkeypatch):
    monkeypatch.setenv("SHERLIIC_CHIRPS", "/elsewhere/chirps.tsv")
    assert resource_files({"SHERLIIC_PPDB": "/x/ppdb.txt", "SHERLIIC_CHIRPS": ""}) == {
        "SHERLIIC_PPDB": Path("/x/ppdb.txt")
    }
    assert resource_files()["SHERLIIC_CHIRPS"] == Path("/elsewhere/chirps.tsv")  # default: os.environ
    assert set(RULE_FILES) == set(RESOURCE_VARIABLES)


def test_db_form():
    # passive end gets "be"; a reversed relation is read from the end
    assert rules.db_form("pobj^-___by___prep^-___invade___nsubjpass", True) == "be invade by"
    assert rules.db_form("nsubjpass^-___found___prep___by___pobj", False) == "be found by"
    assert rules.db_form("nsubj^-___trade___prep___with___pobj", False) == "trade with"


def test_berant_i_loader_inversion_flags():
    graph = rules.load_berant_i(FIX / "berant_i.txt")
    assert graph[("lead", "head")] == [False]
    assert graph[("be found by", "found")] == [True]  # -R>
    assert graph[("buy", "own")] == [False]  # equal types: never type-inverted
    assert graph[("acquire", "be own by")] == [True]  # `->` but premise type 1 = hypothesis type 2


def test_berant_i_lookup(ctx):
    items = _items(
        [
            ("nsubj^-___lead___dobj", "nsubj^-___head___dobj"),  # yes
            ("nsubj^-___lead___dobj", "dobj^-___head___nsubj"),  # inversion differs: no
            ("pobj^-___by___prep^-___found___nsubjpass", "nsubj^-___found___dobj"),  # -R> rule: yes
            ("nsubj^-___acquire___dobj", "pobj^-___by___prep^-___own___nsubjpass"),  # type-inverted: yes
            ("nsubj^-___buy___dobj", "dobj^-___own___nsubj"),  # aligned rule, inverted item: no
        ]
    )
    assert rules.berant_i_score(items, ctx).tolist() == [1, 0, 1, 1, 0]


def test_berant_i_bad_line(tmp_path):
    bad = tmp_path / "edges.txt"
    bad.write_text("<a::t::u>\t->\t<b::t::u>\n<a::t::u>\t=>\t<b::t::u>\n")
    with pytest.raises(InputError, match=r"edges.txt:2"):
        rules.load_berant_i(bad)


def test_berant_ii(ctx):
    loaded = rules.load_berant_ii(FIX / "berant_ii.txt")
    assert ("be found by", "found", True) in loaded  # "founded" lemmatized after "be"; @R@ on one side
    assert ("buy", "be sell to", False) in loaded  # @R@ on both sides: aligned
    items = _items(
        [
            ("pobj^-___by___prep^-___found___nsubjpass", "nsubj^-___found___dobj"),
            ("nsubj^-___visit___dobj", "nsubj^-___go___prep___to___pobj"),
            ("nsubj^-___buy___dobj", "nsubjpass^-___sell___prep___to___pobj"),
            ("nsubj^-___go___prep___to___pobj", "nsubj^-___visit___dobj"),  # rules are directed
        ]
    )
    assert rules.berant_ii_score(items, ctx).tolist() == [1, 1, 1, 0]


def test_berant_ii_scored_file_threshold(tmp_path):
    scored = tmp_path / "local.txt"
    scored.write_text("a\tb\t0.5\nc\td\t-3\n")
    assert rules.load_berant_ii(scored) == {("a", "b", False)}
    scored.write_text("a\tb\tx\n")
    with pytest.raises(InputError, match="local.txt:1"):
        rules.load_berant_ii(scored)


def test_ppdb_substitute(ctx):
    items = _items(
        [
            ("nsubj^-___lead___dobj", "nsubj^-___head___dobj"),  # PPDB paraphrases
            ("nsubj^-___head___dobj", "nsubj^-___direct___dobj"),  # only via "lead": no
            ("nsubj^-___visit___dobj", "dobj^-___tour___nsubj"),  # paraphrase but arguments swapped: no
            ("nsubj^-___tour___dobj", "nsubj^-___visit___dobj"),  # symmetric lexicon
        ]
    )
    assert rules.ppdb_score(items, ctx).tolist() == [1, 0, 0, 1]


def test_patty(ctx):
    p = "nsubj^-___lead___dobj"
    items = _items(
        [
            (p, "nsubj^-___work___prep___for___pobj"),
            (p, "dobj^-___work___nsubj"),
            (p, "nsubj^-___head___dobj"),
        ],
        middles=[("is leading", "is working for"), ("leads", "is working for"), ("is leading", "is heading")],
    )
    # pattern 1 (is leading|leads) is subsumed by pattern 3 (is working [[prp]]); item 2 is unaligned
    assert rules.patty_score(items, ctx).tolist() == [1, 0, 0]


def test_schoenmackers(ctx):
    items = _items(
        [
            ("nsubj^-___lead___dobj", "nsubj^-___head___dobj"),
            ("pobj^-___by___prep^-___found___nsubjpass", "nsubj^-___own___dobj"),
            ("nsubj^-___head___dobj", "nsubj^-___lead___dobj"),
        ]
    )
    assert rules.schoenmackers_score(items, ctx).tolist() == [1, 1, 0]


def test_schoenmackers_bad_line(tmp_path):
    bad = tmp_path / "sherlock.txt"
    bad.write_text('rule "a(x_A, y_B) :- b(x_A, y_B)" 0.5\nnot a rule\n')
    with pytest.raises(InputError, match="sherlock.txt:2"):
        rules.load_schoenmackers(bad)


def test_chirps(ctx):
    store = rules.load_chirps(FIX / "chirps.tsv")
    assert store == {("visit", "go to", False), ("lead", "be lead by", True)}  # "the {a0} visit" dropped
    items = _items(
        [
            ("nsubj^-___visit___dobj", "nsubj^-___go___prep___to___pobj"),
            ("nsubj^-___go___prep___to___pobj", "nsubj^-___visit___dobj"),  # paraphrases are symmetric
            ("nsubj^-___lead___dobj", "nsubjpass^-___lead___prep___by___pobj"),  # not inverted: no
            ("nsubj^-___lead___dobj", "pobj^-___by___prep^-___lead___nsubjpass"),
        ]
    )
    assert rules.chirps_score(items, ctx).tolist() == [1, 1, 0, 1]


def test_all_rules_is_the_union(ctx):
    items = _items(
        [
            ("nsubj^-___lead___dobj", "nsubj^-___lead___dobj"),  # Lemma
            ("nsubj^-___visit___dobj", "nsubj^-___go___prep___to___pobj"),  # Berant II / Chirps
            ("nsubj^-___acquire___dobj", "pobj^-___by___prep^-___own___nsubjpass"),  # Berant I
            ("nsubj^-___head___dobj", "nsubj^-___lead___dobj"),  # PPDB
            ("nsubj^-___eat___dobj", "nsubj^-___sleep___dobj"),  # nothing
        ]
    )
    assert rules.all_rules_score(items, ctx).tolist() == [1, 1, 1, 1, 0]
    assert ctx.cache["all_rules_used"] == ["Lemma", *rules.ALL_RULE_BASELINES]


def test_missing_resources_are_skipped_with_a_message():
    ctx = Context(shared_data=str(FIX))  # no rules/patty etc. in there, no rule files named
    items = _items([("nsubj^-___lead___dobj", "nsubj^-___head___dobj")])
    items["label"] = [True]
    ev = evaluate_many(["Patty", "Chirps", "Schoenmackers"], items, ctx, show_progress=False)
    assert ev.rows == []
    assert set(ev.skipped) == {"Patty", "Chirps", "Schoenmackers"}
    assert "not found" in ev.skipped["Chirps"] and "SHERLIIC_CHIRPS" in ev.skipped["Chirps"]
