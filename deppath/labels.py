"""The one table mapping spaCy/ClearNLP dependency labels to the Stanford basic labels SherLIiC used.

SherLIiC's paths (paper §2.1, Appendix A) were extracted with Stanford basic dependencies; spaCy's
English models emit ClearNLP labels. The mapping is applied before filtering and stored in the path.
Labels whose Stanford counterpart depends on the context (acl, dative) are resolved by
:func:`stanford_label`; copular attr/acomp are handled by re-heading in :mod:`deppath.paths`.
"""

from __future__ import annotations

from collections.abc import Iterable

# ClearNLP label -> Stanford basic label, for the context-free cases. Labels not listed are shared by
# both schemes (nsubj, nsubjpass, dobj, pobj, prep, poss, appos, xcomp, ccomp, advcl, conj, ...).
CLEAR_TO_STANFORD: dict[str, str] = {
    "relcl": "rcmod",  # relative clause modifier
    "compound": "nn",  # noun compound modifier
    "nmod": "nn",  # ClearNLP nominal modifier ("the Nobel Peace prize") = Stanford nn
    "agent": "prep",  # passive "by": Stanford basic has prep(invaded, by) + pobj(by, A)
    "nummod": "num",
    "case": "possessive",  # ClearNLP uses case only for the possessive clitic 's
    "oprd": "xcomp",  # object predicate ("named him president") is xcomp in Stanford basic
    "meta": "dep",
    "intj": "discourse",
    "ROOT": "root",
}

# Context-dependent ClearNLP labels (resolved in stanford_label); listed here so the table is complete.
CONTEXT_DEPENDENT = {
    "acl": "partmod (VBG/VBN participle), infmod (to-infinitive), else dep",
    "dative": "iobj (nominal), prep (the preposition 'to'/'for' of 'giving to India')",
}

# Labels of the Stanford basic scheme (de Marneffe & Manning 2008 manual, v2/v3), accepted as-is in
# pre-parsed input.
STANFORD_LABELS = frozenset(
    """root dep aux auxpass cop arg agent comp acomp ccomp xcomp complm obj dobj iobj pobj attr
    subj nsubj nsubjpass csubj csubjpass cc conj expl mod abbrev amod appos advcl purpcl det predet
    preconj infmod mwe partmod advmod neg rcmod quantmod nn npadvmod tmod num number prep poss
    possessive prt parataxis punct ref sdep xsubj pcomp rel mark discourse goeswith""".split()
)

# Labels that only Universal Dependencies (v1/v2) use: neither ClearNLP nor Stanford basic has them.
UD_ONLY_LABELS = frozenset(
    """obj obl fixed flat vocative dislocated clf orphan reparandum list compound:prt nmod:poss
    nsubj:pass csubj:pass aux:pass obl:tmod obl:npmod nmod:tmod nmod:npmod det:predet acl:relcl
    flat:name cc:preconj""".split()
)


def stanford_label(label: str, tag: str = "", has_to_marker: bool = False, has_pobj: bool = False) -> str:
    """Stanford basic label for a ClearNLP label of a token with fine-grained tag ``tag``.

    ``has_to_marker``: the token has an infinitival "to" (tag TO) among its dependents (acl → infmod).
    ``has_pobj``: the token has a pobj dependent, i.e. it is a preposition (dative → prep).
    """
    if label == "acl":
        if has_to_marker or tag == "VB":
            return "infmod"
        if tag in ("VBG", "VBN"):
            return "partmod"
        return "dep"
    if label == "dative":
        # spaCy labels the "to" of "giving to India" dative; Stanford: prep(give, to) pobj(to, India).
        return "prep" if has_pobj or tag in ("IN", "TO") else "iobj"
    return CLEAR_TO_STANFORD.get(label, label)


def check_label_set(labels: Iterable[str]) -> str | None:
    """The first label (in the given order) showing that a parse uses Universal Dependencies, or None.

    Paths must be in the Stanford basic / ClearNLP scheme the SherLIiC filters are defined on; a
    CoNLL-U file with UD labels (obj, obl, nsubj:pass, case-marked prepositions, ...) is rejected.
    ``case`` alone is ambiguous (ClearNLP uses it for possessive 's), so it counts as UD only when the
    set has no ``prep``/``pobj`` (UD has neither).
    """
    seen = list(dict.fromkeys(labels))
    for label in seen:
        if label in UD_ONLY_LABELS or ":" in label:
            return label
    if "case" in seen and not {"prep", "pobj"} & set(seen):
        return "case"
    return None
