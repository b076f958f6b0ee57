"""Dependency paths from real spaCy parses (docs/design.md §3): paper shapes, Stanford conversion, copulas,
orientation and the parser-independent DepSentence."""

from __future__ import annotations

import pytest

from deppath.extraction import path_for_text
from deppath.parsing import load_nlp
from deppath.paths import (
    DepSentence,
    DepToken,
    canonical_path,
    is_reversed,
    labels_of,
    lemmas_of,
    path_between,
    predicate_lemma,
    reverse_path,
)


@pytest.fixture(scope="module")
def nlp():
    return load_nlp(ner=False)


@pytest.mark.parametrize(
    ("text", "left", "right", "expected"),
    [
        # the paper's example
        ("Bezos leads Amazon", "Bezos", "Amazon", "nsubj^-___lead___dobj"),
        # prep/pobj
        ("Russia is trading with Cuba", "Russia", "Cuba", "nsubj^-___trade___prep___with___pobj"),
        # passive with agent "by" (agent → prep); SherLIiC orientation: A = Russia on the left
        (
            "Ukraine is being invaded by Russia",
            "Russia",
            "Ukraine",
            "pobj^-___by___prep^-___invade___nsubjpass",
        ),
        # xcomp chain
        ("Apple wants to buy Beats", "Apple", "Beats", "nsubj^-___want___xcomp___buy___dobj"),
        # appos
        ("Bezos, the founder of Amazon, spoke.", "Bezos", "Amazon", "appos___founder___prep___of___pobj"),
        # copulas: re-headed on the predicate noun/adjective ...
        ("Gulf Air is Croatia's carrier", "Croatia", "Gulf Air", "poss^-___carrier___nsubj"),
        ("Jobs is Apple's leader", "Jobs", "Apple", "nsubj^-___leader___poss"),
        # the parser splits the mention ("States of (America's friend)"); repair_mentions fixes it
        (
            "Saddam Hussein is United States of America's friend",
            "Saddam Hussein",
            "United States of America",
            "nsubj^-___friend___poss",
        ),
        ("Russia is afraid of Cuba", "Russia", "Cuba", "nsubj^-___afraid___prep___of___pobj"),
        ("Melbourne is city of Tamil Nadu", "Melbourne", "Tamil Nadu", "nsubj^-___city___prep___of___pobj"),
        (
            "Amazon has been the leader of the market.",
            "Amazon",
            "market",
            "nsubj^-___leader___prep___of___pobj",
        ),
        (
            "Amazon wants to be the leader of the market.",
            "Amazon",
            "market",
            "nsubj^-___want___xcomp___leader___prep___of___pobj",
        ),
        # spaCy hangs the subject on the auxiliary of "is regarding"; auxiliaries take no dependents
        ("Russia is regarding India", "Russia", "India", "nsubj^-___regard___dobj"),
        # ... but "be" stays the head with a prepositional complement
        (
            "Russia is at war with Cuba",
            "Russia",
            "Cuba",
            "nsubj^-___be___prep___at___pobj___war___prep___with___pobj",
        ),
        # dative: the preposition "to" of "giving to" is prep + pobj, a nominal dative is iobj
        ("India is giving to Pakistan", "India", "Pakistan", "nsubj^-___give___prep___to___pobj"),
        ("Google is giving Yahoo something", "Google", "Yahoo", "nsubj^-___give___iobj"),
        # relcl → rcmod
        ("Google bought YouTube, which Hurley founded.", "YouTube", "Hurley", "rcmod___found___nsubj"),
        # acl → partmod (participle) / infmod (to-infinitive)
        (
            "Melbourne is city used in Tamil Nadu",
            "Melbourne",
            "Tamil Nadu",
            "nsubj^-___city___partmod___use___prep___in___pobj",
        ),
        (
            "Liverpool is the team to beat in the league.",
            "Liverpool",
            "league",
            "nsubj^-___team___infmod___beat___prep___in___pobj",
        ),
        # a particle followed by the object is a preposition (PTB-style PP)
        ("Google is taking on Microsoft.", "Google", "Microsoft", "nsubj^-___take___prep___on___pobj"),
        # object predicate of a passive is its dobj
        (
            "Obama was elected President of the United States.",
            "Obama",
            "United States",
            "nsubjpass^-___elect___dobj___President___prep___of___pobj",
        ),
        # lemmas keep the corpus' case ("CEO", as in SherLIiC)
        ("Eric Schmidt is CEO of Apple.", "Eric Schmidt", "Apple", "nsubj^-___CEO___prep___of___pobj"),
    ],
)
def test_paper_shapes_from_real_parses(nlp, text, left, right, expected):
    assert path_for_text(text, left, right, nlp=nlp) == expected


def test_path_for_text_same_head_and_two_sentences(nlp):
    assert path_for_text("Bezos met Obama. Amazon grew.", "Bezos", "Amazon", nlp=nlp) == ""
    assert path_for_text("Bezos leads Amazon", (0, 5), (0, 5), nlp=nlp) == ""


def test_path_between_accepts_spacy_span_and_counts_tokens_in_the_sentence(nlp):
    doc = nlp("It rained. Bezos leads Amazon.")
    sent = list(doc.sents)[1]
    assert path_between(sent, 0, 2) == "nsubj^-___lead___dobj"
    assert path_between(sent, 2, 0) == "dobj^-___lead___nsubj"
    assert path_between(sent, 1, 1) == ""
    with pytest.raises(IndexError):
        path_between(sent, 0, 9)


# -- parser-independent sentences ---------------------------------------------------------------------
CLEAR_CONLLU = """# text = Gulf Air is Croatia's carrier
1\tGulf\tGulf\tPROPN\tNNP\t_\t2\tcompound\t_\t_
2\tAir\tAir\tPROPN\tNNP\t_\t3\tnsubj\t_\t_
3\tis\tbe\tAUX\tVBZ\t_\t0\tROOT\t_\t_
4\tCroatia\tCroatia\tPROPN\tNNP\t_\t6\tposs\t_\tSpaceAfter=No
5\t's\t's\tPART\tPOS\t_\t4\tcase\t_\t_
6\tcarrier\tcarrier\tNOUN\tNN\t_\t3\tattr\t_\t_
"""

STANFORD_CONLLU = """1\tGulf\tGulf\tNNP\tNNP\t_\t2\tnn\t_\t_
2\tAir\tAir\tNNP\tNNP\t_\t6\tnsubj\t_\t_
3\tis\tbe\tVBZ\tVBZ\t_\t6\tcop\t_\t_
4\tCroatia\tCroatia\tNNP\tNNP\t_\t6\tposs\t_\tSpaceAfter=No
5\t's\t's\tPOS\tPOS\t_\t4\tpossessive\t_\t_
6\tcarrier\tcarrier\tNN\tNN\t_\t0\troot\t_\t_
"""


def test_depsentence_from_conllu_clearnlp_is_converted():
    sent = DepSentence.from_conllu(CLEAR_CONLLU.splitlines())
    assert sent.scheme == "clear"
    assert sent.text == "Gulf Air is Croatia's carrier"
    assert [(t.start, t.end) for t in sent.tokens][3:5] == [(12, 19), (19, 21)]
    assert path_between(sent, 3, 1) == "poss^-___carrier___nsubj"
    st = sent.stanford
    assert [t.dep for t in st.tokens] == ["nn", "nsubj", "cop", "poss", "possessive", "root"]
    assert st.tokens[5].head == -1 and st.tokens[2].head == 5


def test_depsentence_from_conllu_stanford_is_used_as_is():
    sent = DepSentence.from_conllu(STANFORD_CONLLU.splitlines())
    assert sent.scheme == "stanford" and sent.stanford is sent
    assert sent.text == "Gulf Air is Croatia's carrier"  # rebuilt from forms and SpaceAfter=No
    assert path_between(sent, 3, 1) == "poss^-___carrier___nsubj"


def test_depsentence_from_conllu_errors():
    with pytest.raises(ValueError, match="10 tab-separated columns"):
        DepSentence.from_conllu(["1\tBezos\tBezos\tNNP"])
    with pytest.raises(ValueError, match="HEAD"):
        DepSentence.from_conllu(["1\tBezos\tBezos\tPROPN\tNNP\t_\tx\tnsubj\t_\t_"])
    with pytest.raises(ValueError, match="invalid head"):
        DepSentence.from_conllu(["1\tBezos\tBezos\tPROPN\tNNP\t_\t5\tnsubj\t_\t_"])
    with pytest.raises(ValueError, match="unknown dependency scheme"):
        DepSentence([], scheme="ud")


def test_depsentence_direct_construction_and_span_root():
    toks = [
        DepToken("Yahoo", "Yahoo", "NNP", "pobj", 2),
        DepToken("!", "!", ".", "punct", 2),
        DepToken("from", "from", "IN", "ROOT", -1),
    ]
    sent = DepSentence(toks)
    assert sent.text == "Yahoo ! from"
    # a mention split by the parser: punctuation never heads it
    assert sent.span_root(0, 1) == 0
    assert sent.span_root(0, 0) == 0


def test_forest_gives_no_path():
    toks = [DepToken("a", "a", "NN", "ROOT", -1), DepToken("b", "b", "NN", "ROOT", -1)]
    assert path_between(DepSentence(toks, scheme="stanford"), 0, 1) == ""


# -- orientation ---------------------------------------------------------------------------------------
def test_reverse_path_round_trip_and_examples():
    p = "nsubj^-___lead___dobj"
    assert reverse_path(p) == "dobj^-___lead___nsubj"
    p2 = "pobj^-___by___prep^-___invade___nsubjpass"
    assert reverse_path(p2) == "nsubjpass^-___invade___prep___by___pobj"
    for path in (p, p2, "nsubj^-___be___prep___at___pobj___war___prep___with___pobj", "appos"):
        assert reverse_path(reverse_path(path)) == path
    assert reverse_path("") == ""


def test_is_reversed_and_predicate_lemma():
    assert not is_reversed("nsubj^-___lead___dobj")
    assert is_reversed("dobj^-___lead___nsubj")
    assert is_reversed("pobj^-___by___prep^-___invade___nsubjpass")
    assert is_reversed("pobj^-___of___prep^-___capital___nsubj^-")  # ^- ignored
    assert predicate_lemma("nsubj^-___have___dobj___advantage___prep___over___pobj") == "have"
    assert predicate_lemma("pobj^-___over___prep^-___advantage___dobj^-___have___nsubj") == "have"
    assert predicate_lemma("appos") == ""
    assert labels_of("pobj^-___by___prep^-___invade___nsubjpass") == ["pobj", "prep", "nsubjpass"]
    assert lemmas_of("pobj^-___by___prep^-___invade___nsubjpass") == ["by", "invade"]


def test_canonical_path_subject_left():
    assert canonical_path("nsubj^-___lead___dobj") == ("nsubj^-___lead___dobj", False)
    assert canonical_path("dobj^-___lead___nsubj") == ("nsubj^-___lead___dobj", True)
    # crossed premise/hypothesis pairs map to the same canonical relation with swapped arguments
    p = "pobj^-___by___prep^-___invade___nsubjpass"
    canon, rev = canonical_path(p)
    assert rev and canon == "nsubjpass^-___invade___prep___by___pobj" and not is_reversed(canon)
    # both ends subjects: the orientation with nsubj on the left wins, from either side
    both = "nsubj^-___say___ccomp___win___nsubjpass"
    assert canonical_path(both) == (both, False)
    assert canonical_path(reverse_path(both)) == (both, True)
    # no subject end: unchanged
    assert canonical_path("poss^-___leader___appos") == ("poss^-___leader___appos", False)
    # canonicalising is idempotent
    for path in (p, both, "dobj^-___lead___nsubj"):
        c, _ = canonical_path(path)
        assert canonical_path(c) == (c, False)


def test_repair_mentions_possessive_inside_a_split_mention(nlp):
    from deppath.paths import repair_mentions

    doc = nlp("Obama met United States of America's president.")
    sent = DepSentence.from_span(doc[:]).stanford
    mention = (2, 5)  # United States of America
    # the raw parse hangs "president" inside the mention
    broken = sent.span_root(*mention)
    assert path_between(sent, 0, broken) != "nsubj^-___meet___dobj___president___poss"
    fixed = repair_mentions(sent, [(0, 0), mention])
    assert path_between(fixed, 0, fixed.span_root(*mention)) == "nsubj^-___meet___dobj___president___poss"
    # nothing to repair: the same object comes back
    plain = DepSentence.from_span(nlp("Obama met Putin's wife.")[:]).stanford
    assert repair_mentions(plain, [(0, 0), (2, 2)]) is plain
