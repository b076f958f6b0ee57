"""SherLIiC dependency paths (docs/design.md §3): parser-independent sentences, Stanford conversion, paths.

A path is the shortest walk in the dependency tree between the head tokens of two mentions, written
as alternating labels and lemmas joined by ``___`` (labels at even, lemmas at odd positions); an edge
walked from dependent to head carries ``^-``. "Bezos leads Amazon": ``nsubj^-___lead___dobj``.

Parses come from spaCy (ClearNLP labels) or from CoNLL-U files; :class:`DepSentence` holds either and
converts ClearNLP to Stanford basic (label table in :mod:`deppath.labels`, copula re-heading) once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from deppath.filters import rejection_rule  # re-exported: part of the path API
from deppath.labels import STANFORD_LABELS, stanford_label

if TYPE_CHECKING:  # spaCy is only needed to build sentences from parses
    from spacy.tokens import Span

__all__ = [
    "DepSentence",
    "DepToken",
    "SEP",
    "canonical_path",
    "doc_arrays",
    "is_reversed",
    "labels_of",
    "lemmas_of",
    "path_between",
    "predicate_lemma",
    "repair_mentions",
    "rejection_rule",
    "reverse_path",
]

SEP = "___"
UP = "^-"
SUBJECT_LABELS = frozenset({"nsubj", "nsubjpass"})
# Labels that mark a parse as already Stanford basic (absent from ClearNLP).
_STANFORD_MARKERS = frozenset({"cop", "rcmod", "nn", "partmod", "infmod", "possessive", "num", "tmod"})
_COPULA_COMPLEMENTS = ("attr", "acomp")


class DepToken(NamedTuple):
    """One token: surface text, lemma, fine-grained tag, dependency label, head index (-1 = root).

    ``start``/``end`` are character offsets of the token in the document text (for mention alignment).
    A NamedTuple (not a dataclass) because sentences are built per parsed sentence in the hot loop.
    """

    text: str
    lemma: str
    tag: str
    dep: str
    head: int
    start: int = 0
    end: int = 0


class DepSentence:
    """A dependency-parsed sentence independent of the parser.

    Build it with :meth:`from_span` (a spaCy sentence) or :meth:`from_conllu` (CoNLL-U lines) or
    directly from :class:`DepToken` s (heads are 0-based indexes into the sentence, -1 for the root).
    ``scheme`` is ``"clear"`` (spaCy/ClearNLP labels, converted to Stanford basic on first use) or
    ``"stanford"`` (already Stanford basic: used as is). :attr:`stanford` gives the converted sentence.
    """

    __slots__ = ("tokens", "text", "start", "scheme", "_stanford")

    def __init__(self, tokens: Sequence[DepToken], text: str = "", start: int = 0, scheme: str = "clear"):
        if scheme not in ("clear", "stanford"):
            raise ValueError(f"unknown dependency scheme {scheme!r} (expected 'clear' or 'stanford')")
        n = len(tokens)
        for i, tok in enumerate(tokens):
            if not -1 <= tok.head < n or tok.head == i:
                raise ValueError(f"token {i + 1} ({tok.text!r}) has an invalid head {tok.head + 1}")
        self.tokens: tuple[DepToken, ...] = tuple(tokens)
        self.text = text or " ".join(t.text for t in tokens)
        self.start = start  # character offset of the sentence in its document
        self.scheme = scheme
        self._stanford: DepSentence | None = self if scheme == "stanford" else None

    def __len__(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        return f"DepSentence({self.text!r}, scheme={self.scheme!r})"

    # -- constructors -------------------------------------------------------------------------------
    @classmethod
    def from_span(cls, span: Span, arrays: Any = None) -> DepSentence:
        """From a parsed spaCy sentence (``doc.sents`` item); character offsets stay document-based.

        ``arrays``: optional :func:`doc_arrays` of the span's Doc, computed once per document by callers
        that build several sentences (avoids creating a Python Token object per token).
        """
        return cls.from_doc(span.doc, span.start, span.end, arrays)

    @classmethod
    def from_doc(
        cls, doc: Any, first: int, end: int, arrays: Any = None, text: str | None = None
    ) -> DepSentence:
        """Tokens [first, end) of a parsed spaCy Doc; ``text`` = the Doc's text if the caller has it."""
        if arrays is None:
            arrays = doc_arrays(doc)
        orth, lemma_ids, tag_ids, dep_ids, rel_head, idx = arrays[:6]
        strings = doc.vocab.strings
        tokens = []
        for i in range(first, end):
            form = strings[orth[i]]
            lemma = strings[lemma_ids[i]] or form
            if i != first:
                lemma = _surface_case(form, lemma)
            h = rel_head[i]
            start = idx[i]
            tokens.append(
                DepToken(
                    form,
                    lemma,
                    strings[tag_ids[i]],
                    strings[dep_ids[i]],
                    i + h - first if h else -1,
                    start,
                    start + len(form),
                )
            )
        if not tokens:
            return cls(tokens, "", 0, "clear")
        s0, e0 = tokens[0].start, tokens[-1].end
        sent_text = text[s0:e0] if text is not None else doc[first:end].text
        return cls(tokens, sent_text, s0, "clear")

    @classmethod
    def from_conllu(cls, lines: Sequence[str], scheme: str | None = None) -> DepSentence:
        """From the lines of one CoNLL-U sentence (comments allowed; no blank line inside).

        Columns used: ID, FORM, LEMMA, XPOS (falling back to UPOS), HEAD, DEPREL, and MISC's
        ``SpaceAfter=No``. Multi-word token ranges (``1-2``) and empty nodes (``1.1``) are skipped.
        The text is ``# text =`` when given, else the forms joined by spaces. ``scheme``: ``"clear"``
        or ``"stanford"``; None = detect (Stanford-only labels such as cop/rcmod/nn → ``"stanford"``).
        Raises ``ValueError`` naming the token line on malformed input (the caller adds file/line).
        Use :func:`deppath.labels.check_label_set` first to reject Universal Dependencies labels.
        """
        text = None
        rows: list[list[str]] = []
        for line in lines:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if line.startswith("#"):
                key, _, value = line[1:].partition("=")
                if key.strip() == "text":
                    text = value.strip()
                continue
            cols = line.split("\t")
            if len(cols) != 10:
                raise ValueError(
                    f"CoNLL-U token line needs 10 tab-separated columns, got {len(cols)}: {line!r}"
                )
            if "-" in cols[0] or "." in cols[0]:
                continue
            rows.append(cols)
        forms = [c[1] for c in rows]
        starts: list[int] = []
        if text is not None:
            pos = 0
            for form in forms:
                at = text.find(form, pos)
                if at < 0:
                    raise ValueError(f"token {form!r} not found in '# text' after offset {pos}")
                starts.append(at)
                pos = at + len(form)
        else:
            pieces, pos = [], 0
            for c in rows:
                starts.append(pos)
                space = "" if "SpaceAfter=No" in c[9] else " "
                pieces.append(c[1] + space)
                pos += len(c[1]) + len(space)
            text = "".join(pieces).rstrip()
        tokens = []
        for k, c in enumerate(rows):
            if c[0] != str(k + 1):
                raise ValueError(f"token ids must run 1..n; got {c[0]!r} at position {k + 1}")
            try:
                head = int(c[6]) - 1
            except ValueError:
                raise ValueError(f"token {c[0]}: HEAD {c[6]!r} is not a number") from None
            lemma = c[2] if c[2] not in ("_", "") else c[1]
            tag = c[4] if c[4] != "_" else c[3]
            tokens.append(DepToken(c[1], lemma, tag, c[7], head, starts[k], starts[k] + len(c[1])))
        if scheme is None:
            scheme = "stanford" if any(t.dep in _STANFORD_MARKERS for t in tokens) else "clear"
        return cls(tokens, text, 0, scheme)

    # -- Stanford basic conversion ------------------------------------------------------------------
    @property
    def stanford(self) -> DepSentence:
        """This sentence in Stanford basic dependencies (labels mapped, copulas re-headed); cached."""
        if self._stanford is None:
            self._stanford = _to_stanford(self)
        return self._stanford

    def heads(self) -> list[int]:
        return [t.head for t in self.tokens]

    def span_root(self, first: int, last: int) -> int:
        """Head token of the token span [first, last] (inclusive): the one whose head lies outside it.

        Several candidates (a span that is not a subtree): the one closest to the sentence root.
        """
        tokens = self.tokens
        candidates = [i for i in range(first, last + 1) if not first <= tokens[i].head <= last]
        if len(candidates) == 1:
            return candidates[0]

        # The parse split the mention: ignore punctuation ("Yahoo !") and prefer nominal tokens.
        def rank(i: int) -> tuple[int, int, int]:
            depth, j = 0, i
            while tokens[j].head >= 0 and depth <= len(tokens):
                j = tokens[j].head
                depth += 1
            tag = tokens[i].tag
            is_punct = tokens[i].dep == "punct" or not tag[:1].isalnum()
            return (is_punct, not tag.startswith(("NN", "PRP", "CD")), depth)

        return min(candidates, key=rank)


def doc_arrays(doc: Any) -> tuple[list[int], ...]:
    """Per-token ORTH, LEMMA, TAG, DEP ids, relative HEAD offsets, character offsets and SENT_START
    (1 = starts a sentence) of a spaCy Doc, as lists."""
    from spacy.attrs import DEP, HEAD, IDX, LEMMA, ORTH, SENT_START, TAG

    arr = doc.to_array([ORTH, LEMMA, TAG, DEP, HEAD, IDX, SENT_START])
    cols = arr.T.tolist()
    # HEAD and SENT_START are signed values stored in an unsigned array
    for c in (4, 6):
        cols[c] = [h - (1 << 64) if h >= 1 << 63 else h for h in cols[c]]
    return tuple(cols)


def _surface_case(text: str, lemma: str) -> str:
    """spaCy lowercases the lemmas of common words; SherLIiC's lemmas keep the corpus' case ("CEO",
    "President", "In"). Restore a capital that the text has (not for the sentence's first word, where
    the capital is orthographic)."""
    if not text[:1].isupper() or lemma[:1].isupper():
        return lemma
    if lemma == text.lower():
        return text
    return lemma[:1].upper() + lemma[1:]


# Particles spaCy separates from a following object where PTB-style (Stanford) parses have a PP:
# "is taking on Google" → prep(take, on) pobj(on, Google). Only words that are also prepositions.
_PREPOSITIONAL_PARTICLES = frozenset(
    "in on over about around through across along after against into with for to from at by".split()
)


def _to_stanford(sent: DepSentence) -> DepSentence:
    """ClearNLP → Stanford basic: map labels (deppath.labels) and head copular clauses on the predicate."""
    toks = sent.tokens
    n = len(toks)
    heads = [t.head for t in toks]
    children: list[list[int]] = [[] for _ in range(n)]
    for i, h in enumerate(heads):
        if h >= 0:
            children[h].append(i)
    # Auxiliaries take no dependents in Stanford basic; spaCy sometimes hangs the subject on "is" of
    # "is regarding": move such dependents to the verb.
    for a in range(n):
        if toks[a].dep in ("aux", "auxpass") and heads[a] >= 0:
            for k in children[a]:
                heads[k] = heads[a]
                children[heads[a]].append(k)
            children[a] = []
    deps = []
    for i, t in enumerate(toks):
        if t.dep in ("acl", "dative"):
            kids = children[i]
            deps.append(
                stanford_label(
                    t.dep,
                    t.tag,
                    has_to_marker=any(toks[k].tag == "TO" and toks[k].dep == "aux" for k in kids),
                    has_pobj=any(toks[k].dep == "pobj" for k in kids),
                )
            )
        else:
            deps.append(stanford_label(t.dep, t.tag))
    # Copula re-heading (docs/design.md §3): "A is B's leader" → nsubj(leader, A), cop(leader, is). Only a
    # nominal/adjectival complement (attr/acomp) takes over; with a prepositional complement ("A is at
    # war with B") "be" stays the head, as in the SherLIiC data. Existential "there is" keeps "be".
    for b in range(n):
        if toks[b].lemma.lower() != "be" or deps[b] == "cop":
            continue
        kids = children[b]
        if any(deps[k] == "expl" for k in kids):
            for k in kids:  # "there is a man": Stanford nsubj(is, man), expl(is, there)
                if deps[k] == "attr":
                    deps[k] = "nsubj"
            continue
        pred = next((k for k in kids if deps[k] in _COPULA_COMPLEMENTS and heads[k] == b), None)
        if pred is None:
            continue
        heads[pred], deps[pred] = heads[b], deps[b]
        for k in kids:
            if k != pred and heads[k] == b:
                heads[k] = pred
        heads[b], deps[b] = pred, "cop"
        # Bookkeeping so that a chain (be → be) sees the new structure.
        children[pred].extend(k for k in kids if k != pred)
        children[pred].append(b)
        children[b] = []
        if heads[pred] >= 0:
            parent = children[heads[pred]]
            parent[parent.index(b)] = pred
    # Object predicate: "is elected President" has no other object, Stanford makes it the dobj;
    # "named him president" keeps it as xcomp.
    for i in range(n):
        if toks[i].dep == "oprd" and heads[i] >= 0:
            if not any(deps[k] == "dobj" for k in children[heads[i]] if k != i):
                deps[i] = "dobj"
    # Particle directly followed by the verb's object → preposition + pobj (see _PREPOSITIONAL_PARTICLES).
    for i in range(n):
        if deps[i] == "prt" and any(deps[k] == "pobj" for k in children[i]):
            deps[i] = "prep"  # a particle takes no object: spaCy's "prt" with a pobj is a preposition
            continue
        if deps[i] != "prt" or toks[i].lemma.lower() not in _PREPOSITIONAL_PARTICLES or heads[i] < 0:
            continue
        v = heads[i]
        obj = next((k for k in children[v] if deps[k] == "dobj" and heads[k] == v and k > i), None)
        if obj is None or _subtree_start(obj, children) != i + 1:
            continue
        deps[i], deps[obj], heads[obj] = "prep", "pobj", i
        children[v].remove(obj)
        children[i].append(obj)
    # A to-infinitive modifying a noun ("the team to beat") is Stanford's infmod, whatever spaCy called it.
    for i in range(n):
        h = heads[i]
        if (
            deps[i] in ("rcmod", "xcomp", "partmod", "dep")
            and h >= 0
            and toks[h].tag.startswith("NN")
            and any(toks[k].tag == "TO" and deps[k] == "aux" for k in children[i])
        ):
            deps[i] = "infmod"
    # attr of a verb other than "be" ("became president") is xcomp in Stanford basic.
    for i in range(n):
        if deps[i] == "attr" and heads[i] >= 0 and toks[heads[i]].lemma.lower() != "be":
            deps[i] = "xcomp"
    new = [DepToken(t.text, t.lemma, t.tag, deps[i], heads[i], t.start, t.end) for i, t in enumerate(toks)]
    return DepSentence(new, sent.text, sent.start, "stanford")


def repair_mentions(sent: DepSentence, spans: Sequence[tuple[int, int]]) -> DepSentence:
    """Mentions are constituents (the entity linker says so): repair the one parse error that breaks
    a mention and has an unambiguous fix, in the Stanford-basic sentence.

    A possessive "'s" right after a multi-word mention, hung on the mention's last word
    ("United States of America's friend" parsed as "States of (America's friend)"): the possessed
    noun takes the mention root's place (and its clause dependents, e.g. the subject and copula), the
    mention root becomes its poss, and the last word takes the possessed noun's old place.
    ``spans`` are inclusive token index pairs; returns ``sent`` itself when nothing changes.
    """
    toks = list(sent.stanford.tokens)
    n = len(toks)
    changed = False
    for first, last in spans:
        if last == first or last + 1 >= n:
            continue
        clitic, t = toks[last + 1], toks[last]
        x = t.head
        if clitic.tag != "POS" or clitic.head != last or t.dep != "poss" or x < 0 or first <= x <= last:
            continue
        if not first <= toks[x].head <= last:
            continue
        r = DepSentence(toks, scheme="stanford").span_root(first, last)
        if r == last:
            continue
        xh, xd = toks[x].head, toks[x].dep
        rh, rd = toks[r].head, toks[r].dep
        for k, tok in enumerate(toks):  # the clause dependents of the mention root go to the new head
            if tok.head == r and k != x and not first <= k <= last:
                toks[k] = tok._replace(head=x)
        toks[x] = toks[x]._replace(head=rh, dep=rd)
        toks[r] = toks[r]._replace(head=x, dep="poss")
        toks[last] = toks[last]._replace(head=xh, dep=xd)
        changed = True
    return DepSentence(toks, sent.text, sent.start, "stanford") if changed else sent


def _subtree_start(i: int, children: list[list[int]]) -> int:
    start, stack = i, [i]
    while stack:
        k = stack.pop()
        start = min(start, k)
        stack.extend(children[k])
    return start


def _clean_lemma(lemma: str) -> str:
    # A lemma must not contain the separator or whitespace (paths are single tokens in the release files).
    return "_".join(lemma.split()).replace(SEP, "_") or "_"


def path_between(sentence: DepSentence | Span | Any, left: int, right: int) -> str:
    """The shortest dependency path from token ``left`` to token ``right`` (reading-order path, before
    filters), in Stanford basic labels. ``sentence`` is a :class:`DepSentence` or a spaCy sentence
    Span; indexes are 0-based within the sentence. Returns "" when ``left == right``.
    """
    if not isinstance(sentence, DepSentence):
        sentence = DepSentence.from_span(sentence)
    sent = sentence.stanford
    toks = sent.tokens
    n = len(toks)
    if not (0 <= left < n and 0 <= right < n):
        raise IndexError(f"token index out of range: {left}, {right} (sentence has {n} tokens)")
    if left == right:
        return ""
    # Ancestors of `right` with their distance, then climb from `left` to the first common one.
    up_right: dict[int, int] = {}
    j, d = right, 0
    while j >= 0 and j not in up_right:
        up_right[j] = d
        j = toks[j].head
        d += 1
    climb = [left]
    j = left
    while j not in up_right:
        j = toks[j].head
        if j < 0 or j in climb:
            return ""  # different trees (a forest from CoNLL-U) or a cycle: no path
        climb.append(j)
    lca = j
    down = []
    j = right
    while j != lca:
        down.append(j)
        j = toks[j].head
    down.reverse()
    parts: list[str] = []
    for k, tok_i in enumerate(climb[:-1]):
        parts.append(toks[tok_i].dep + UP)
        nxt = climb[k + 1]
        if nxt != right:
            parts.append(_clean_lemma(toks[nxt].lemma))
    for tok_i in down:
        parts.append(toks[tok_i].dep)
        if tok_i != right:
            parts.append(_clean_lemma(toks[tok_i].lemma))
    return SEP.join(parts)


# -- path strings -----------------------------------------------------------------------------------
def labels_of(path: str) -> list[str]:
    """Edge labels of a path without ``^-`` (even positions)."""
    return [e[:-2] if e.endswith(UP) else e for e in path.split(SEP)[0::2]]


def lemmas_of(path: str) -> list[str]:
    """Lemmas of a path (odd positions)."""
    return path.split(SEP)[1::2]


def _toggle(label: str) -> str:
    return label[:-2] if label.endswith(UP) else label + UP


def reverse_path(path: str) -> str:
    """The same path read from the other end: reverse the elements and toggle ``^-`` on every label.

    ``nsubj^-___lead___dobj`` ↔ ``dobj^-___lead___nsubj``.
    """
    if not path:
        return path
    elements = path.split(SEP)
    return SEP.join(e if i % 2 else _toggle(e) for i, e in enumerate(reversed(elements)))


def is_reversed(path: str) -> bool:
    """The paper's flag: the last label (without ``^-``) is nsubj or nsubjpass (the subject is on the
    right, the relation is read from the end)."""
    if not path:
        return False
    last = path.rsplit(SEP, 1)[-1]
    return (last[:-2] if last.endswith(UP) else last) in SUBJECT_LABELS


def canonical_path(path: str) -> tuple[str, bool]:
    """Warehouse orientation (docs/design.md §3): subject end on the left.

    Returns (canonical path, whether it was reversed). If both ends are subject labels, the
    orientation whose left label is nsubj wins; a path without subject end is left as is.
    """
    labels = labels_of(path) if path else []
    if not labels:
        return path, False
    first, last = labels[0], labels[-1]
    if first == "nsubj":
        return path, False
    if last == "nsubj" or (last == "nsubjpass" and first != "nsubjpass"):
        return reverse_path(path), True
    return path, False


def predicate_lemma(path: str) -> str:
    """The predicate lemma: the first lemma, or the last one if the path is reversed ("" if none)."""
    lemmas = lemmas_of(path)
    if not lemmas:
        return ""
    return lemmas[-1] if is_reversed(path) else lemmas[0]


def is_stanford_label(label: str) -> bool:
    """Whether ``label`` belongs to the Stanford basic scheme (for validating pre-parsed input)."""
    return label in STANFORD_LABELS
