"""Meta rules (paper §6, Table 5) on a fixture of InfCands: word-level masking of the common part X,
the character-level variant (agent nouns, re-/over- prefixes) and implicative-verb patterns. The
fixture is written as warehouse.inference_candidates; dbt builds only the meta_rules models on it
(their SQL unit tests run in the same build)."""

from __future__ import annotations

from pathlib import Path

from builds.runner import run_dbt
from warehouse.settings import PROJECT_ROOT
from warehouse.target import Target

# premise path, hypothesis path, alignment, number of typed InfCands (different type signatures)
PAIRS = [
    ("nsubj^-___agree___xcomp___buy___dobj", "nsubj^-___buy___dobj", "straight", 2),
    ("nsubj^-___agree___xcomp___sell___dobj", "nsubj^-___sell___dobj", "straight", 1),
    ("nsubj^-___agree___xcomp___acquire___dobj", "nsubj^-___acquire___dobj", "straight", 1),
    ("nsubj^-___manage___xcomp___win___dobj", "nsubj^-___win___dobj", "straight", 1),
    ("nsubj^-___leader___prep___of___pobj", "nsubj^-___lead___dobj", "straight", 1),
    ("nsubj^-___founder___prep___of___pobj", "nsubj^-___found___dobj", "straight", 1),
    ("nsubj^-___retake___dobj", "nsubj^-___take___dobj", "straight", 1),
    ("nsubj^-___overtake___dobj", "nsubj^-___take___dobj", "straight", 1),
    ("nsubjpass^-___invade___prep___by___pobj", "nsubj^-___invade___dobj", "crossed", 1),
    ("nsubjpass^-___occupy___prep___by___pobj", "nsubj^-___occupy___dobj", "crossed", 3),
    # no common content lemma ("with" is a preposition, never X): no word-level meta rule
    ("nsubj^-___trade___prep___with___pobj", "nsubj^-___deal___prep___with___pobj", "straight", 1),
]


def _make_candidates(target: Target) -> None:
    with target.connect() as conn:
        conn.execute("create schema if not exists warehouse")
        conn.execute(
            "create table warehouse.inference_candidates (premise_typed_rel_id bigint, "
            "hypothesis_typed_rel_id bigint, alignment text, premise_path text, hypothesis_path text)"
        )
        next_id = 1
        for premise, hypothesis, alignment, n_typed in PAIRS:
            for _ in range(n_typed):
                conn.execute(
                    "insert into warehouse.inference_candidates values (%s, %s, %s, %s, %s)",
                    (next_id, next_id + 1, alignment, premise, hypothesis),
                )
                next_id += 2
        conn.commit()


def test_meta_rules_on_fixture(fresh_target: Target, tmp_path: Path) -> None:
    _make_candidates(fresh_target)
    private = ["--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")]
    run_dbt(fresh_target, ["build", "--select", "tag:meta_rules", *private])
    with fresh_target.connect() as conn:
        word = {
            (r[0], r[1], r[2]): r[3:]
            for r in conn.execute(
                "select premise_pattern, hypothesis_pattern, alignment, n_rules, n_fillers, n_infcands "
                "from warehouse.meta_rules_word"
            ).fetchall()
        }
        character = {
            (r[0], r[1]): r[2:]
            for r in conn.execute(
                "select premise_pattern, hypothesis_pattern, stem_position, n_rules, n_fillers "
                "from warehouse.meta_rules_character"
            ).fetchall()
        }
        implicative = {
            r[0]: r[1:]
            for r in conn.execute(
                "select verb, n_meta_rules, n_rules, n_infcands from warehouse.meta_rules_implicative"
            ).fetchall()
        }
    # "A agrees to X B ⇒ A X B": three fillers, four typed InfCands
    assert word[("nsubj^-___agree___xcomp___X___dobj", "nsubj^-___X___dobj", "straight")] == (3, 3, 4)
    # passive ⇒ active with crossed arguments: "B is X-ed by A ⇒ A X-s B"
    assert word[("nsubjpass^-___X___prep___by___pobj", "nsubj^-___X___dobj", "crossed")] == (2, 2, 4)
    assert not any("deal" in key[1] or "trade" in key[0] for key in word)
    assert character[("nsubj^-___Xer___prep___of___pobj", "nsubj^-___X___dobj")] == ("prefix", 2, 2)
    assert character[("nsubj^-___reX___dobj", "nsubj^-___X___dobj")] == ("suffix", 1, 1)
    assert character[("nsubj^-___overX___dobj", "nsubj^-___X___dobj")] == ("suffix", 1, 1)
    assert implicative == {"agree": (1, 3, 4), "manage": (1, 1, 1)}

    # the ad-hoc queries in sql/ show the top meta rules
    queries = sorted((PROJECT_ROOT / "sql").glob("meta_rules*.sql"))
    assert len(queries) >= 3
    with fresh_target.connect() as conn:
        results = {path.name: conn.execute(path.read_text()).fetchall() for path in queries}
    top = results["meta_rules_top.sql"]
    assert top[0][0] == "nsubj^-___agree___xcomp___X___dobj" and top[0][1] == "nsubj^-___X___dobj"
    assert results["meta_rules_implicative.sql"][0][0] == "agree"
    assert results["meta_rules_character.sql"][0][:2] == (
        "nsubj^-___Xer___prep___of___pobj",
        "nsubj^-___X___dobj",
    )
