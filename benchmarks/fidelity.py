"""Path-extraction fidelity on SherLIiC-dev: do we re-derive the benchmark's paths from its sentences?

Each SherLIiC-dev item side (premise, hypothesis) has a gold path (left end = argument A) and an
instantiated sentence ("Russia is trading with Cuba"); 645 items also have the template
("region[A] is trading with location[B]"). We locate the two argument mentions, parse the sentence
with the project's pipeline and compare :func:`deppath.paths.path_between` (A → B, reading
orientation, no canonicalisation, no filters) with the gold path.

Mention location:
- with a template: the sentence must be the template with ``type[A]``/``type[B]`` replaced by names.
  The released sentences drop a possessive ending ("X is Y 's capital" → "X is Y") and the word
  "something"; then the names are read from the shortened sentence and the full template,
  instantiated with them, is parsed instead (class ``repaired`` in the report).
- without a template: both sides of the item mention the same two entities; the names are the
  longest word prefix / suffix of the premise sentence that also occur in the hypothesis sentence
  (trimmed to start/end with a non-lowercase word). Which one is A is then unknown, so a side counts
  as a match when our path equals the gold path read in either direction (``orientation_free``).

Run ``python -m benchmarks.fidelity`` for the report; it also writes ``out/bench/fidelity.json``.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from deppath.parsing import load_nlp, parse_documents, token_span
from deppath.paths import DepSentence, labels_of, lemmas_of, path_between, repair_mentions, reverse_path
from deppath.records import Document, Mention
from warehouse.command_line import CONTEXT, run, version_option
from warehouse.settings import out_folder, require_shared_data

if TYPE_CHECKING:
    from spacy.tokens import Doc

_PLACEHOLDER = re.compile(r"\S*\[([AB])\]")


@dataclass
class Side:
    item_id: str
    side: str  # "premise" | "hypothesis"
    gold: str
    text: str  # the text parsed
    a_span: tuple[int, int] | None  # character span of argument A (or of the first name, no template)
    b_span: tuple[int, int] | None
    oriented: bool  # True: a_span is known to be A; False: orientation unknown (no template)
    repaired: bool = False
    note: str = ""


def _template_regex(template: str) -> re.Pattern[str]:
    out, pos, seen = [], 0, set()
    for m in _PLACEHOLDER.finditer(template):
        out.append(re.escape(template[pos : m.start()]))
        name = m.group(1)
        out.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out))


def _instantiate(template: str, names: dict[str, str]) -> tuple[str, dict[str, tuple[int, int]]]:
    """Template with placeholders replaced by names; " 's" glued as in running text."""
    text, spans, pos = "", {}, 0
    for m in _PLACEHOLDER.finditer(template):
        text += template[pos : m.start()]
        name = names[m.group(1)]
        spans.setdefault(m.group(1), (len(text), len(text) + len(name)))
        text += name
        pos = m.end()
    text += template[pos:]
    # Gluing the clitic shifts nothing before it, and names never contain " 's".
    glued = text.replace(" 's ", "'s ")
    if glued != text:
        idx = text.index(" 's ")
        spans = {k: (s if s < idx else s - 1, e if e <= idx else e - 1) for k, (s, e) in spans.items()}
        text = glued
    return text, spans


def _locate_with_template(
    template: str, sentence: str
) -> tuple[str, dict[str, tuple[int, int]], bool] | None:
    template = " ".join(template.split())
    sentence = " ".join(sentence.split())
    m = _template_regex(template).fullmatch(sentence)
    if m and "A" in m.groupdict() and "B" in m.groupdict():
        return sentence, {k: m.span(k) for k in ("A", "B")}, False
    # Released sentences drop "something" and a possessive ending; read the names from the shortened
    # form and parse the full template.
    variants = []
    short = re.sub(r" something\b", "", template)
    variants.append(short)
    if " 's" in short:
        variants.append(short[: short.index(" 's")])
    for var in variants:
        m = _template_regex(var).fullmatch(sentence)
        if not m:
            continue
        names = {k: m.group(k) for k in ("A", "B") if k in m.groupdict()}
        if len(names) < 2:
            continue
        text, spans = _instantiate(template, names)
        return text, spans, True
    return None


def _words(s: str) -> list[str]:
    return s.split()


def _find_words(haystack: list[str], needle: list[str]) -> int:
    n = len(needle)
    for i in range(len(haystack) - n + 1):
        if haystack[i : i + n] == needle:
            return i
    return -1


def _is_name_word(w: str) -> bool:
    return not (w.isalpha() and w.islower())


def _names_without_template(s1: str, s2: str) -> tuple[str, str] | None:
    """The two entity names of an item from its two sentences (see module doc)."""
    w1, w2 = _words(s1), _words(s2)
    prefix = None
    for k in range(len(w1) - 1, 0, -1):
        if _is_name_word(w1[k - 1]) and _find_words(w2, w1[:k]) >= 0:
            prefix = k
            break
    if prefix is None:
        return None
    for m in range(prefix, len(w1)):
        if _is_name_word(w1[m]) and _find_words(w2, w1[m:]) >= 0:
            return " ".join(w1[:prefix]), " ".join(w1[m:])
    return None


def _spans_of(sentence: str, n1: str, n2: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Character spans of two non-overlapping word-bounded occurrences of n1 and n2 (n1 first found)."""

    def occurrences(name: str) -> list[int]:
        return [m.start() for m in re.finditer(r"(?<!\S)" + re.escape(name) + r"(?!\S)", sentence)]

    for s1 in occurrences(n1):
        for s2 in occurrences(n2):
            e1, e2 = s1 + len(n1), s2 + len(n2)
            if e1 <= s2 or e2 <= s1:
                return (s1, e1), (s2, e2)
    return None


def load_sides(shared_data_dir: Path) -> tuple[list[Side], Counter]:
    """All item sides of SherLIiC-dev with located mentions; counts of sides that could not be located."""
    sides: list[Side] = []
    unlocated: Counter = Counter()
    with open(Path(shared_data_dir) / "sherliic" / "dev.tsv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    for row in rows:
        names = None
        if not row["premise_template"]:
            names = _names_without_template(row["premise_sentence"], row["hypothesis_sentence"])
        for side in ("premise", "hypothesis"):
            gold, sentence = row[f"{side}_path"], " ".join(row[f"{side}_sentence"].split())
            template = row[f"{side}_template"]
            if template:
                found = _locate_with_template(template, sentence)
                if found is None:
                    unlocated["template_does_not_match_sentence"] += 1
                    continue
                text, spans, repaired = found
                sides.append(Side(row["id"], side, gold, text, spans["A"], spans["B"], True, repaired))
            else:
                spans = _spans_of(sentence, *names) if names else None
                if spans is None:
                    unlocated["names_not_found"] += 1
                    continue
                sides.append(Side(row["id"], side, gold, sentence, spans[0], spans[1], False))
    return sides, unlocated


_HEAD_OF_END = frozenset({"rcmod", "partmod", "infmod", "nsubj", "nsubjpass"})


def expresses_path(gold: str, text: str) -> bool:
    """Can the released sentence express the gold path at all?

    No when an argument is the head of the path's end edge (relative clause, participle or the
    subject of a copular predicate — "AOL, which Google wants", "the city in B is A": the verbaliser
    wrote "Google wants AOL"), or when the path needs words the released sentence dropped (a
    possessive "'s", the object "something" of an iobj path).
    """
    elements = gold.split("___")
    first, last = elements[0], elements[-1]
    if (not first.endswith("^-") and first in _HEAD_OF_END) or (
        last.endswith("^-") and last[:-2] in _HEAD_OF_END
    ):
        return False
    labels = labels_of(gold)
    if "poss" in labels and "'s" not in text:
        return False
    return not (labels[0] == "iobj" or labels[-1] == "iobj") or "something" in text


def classify(gold: str, ours: str, text: str) -> str:
    """Coarse failure class of a mismatch (for the report)."""
    if not expresses_path(gold, text):
        return "sentence_does_not_express_path"
    if not ours:
        return "no_path"
    g_el, o_el = gold.split("___"), ours.split("___")
    if g_el[0::2] == o_el[0::2]:
        return "lemma_case" if [x.lower() for x in g_el] == [x.lower() for x in o_el] else "lemma"
    if lemmas_of(gold) == lemmas_of(ours) and len(g_el) == len(o_el):
        return "label_or_attachment_same_words"
    if "be" in lemmas_of(gold) or "be" in lemmas_of(ours):
        return "copula"
    return "parser_attachment"


def _documents(sides: list[Side]) -> list[Document]:
    return [
        Document(
            f"{s.item_id}:{s.side}",
            s.text,
            (Mention(*s.a_span, entity_id="A"), Mention(*s.b_span, entity_id="B")),
            k + 1,
        )
        for k, s in enumerate(sides)
    ]


def _our_path(doc: Doc, document: Document) -> tuple[str, bool]:
    """Raw A→B path with the production parse (mentions merged); (path, both in one sentence)."""
    spans = [token_span(doc, m) for m in document.mentions]
    if None in spans:
        return "", True
    (fa, la), (fb, lb) = spans
    sents = list(doc.sents)
    sa = next(s for s in sents if s.start <= fa < s.end)
    if not (sa.start <= fb < sa.end and la < sa.end and lb < sa.end):
        return "", False
    spans = [(fa - sa.start, la - sa.start), (fb - sa.start, lb - sa.start)]
    dep = repair_mentions(DepSentence.from_span(sa).stanford, spans)
    a, b = dep.span_root(*spans[0]), dep.span_root(*spans[1])
    return (path_between(dep, a, b) if a != b else ""), True


def sherliic_fidelity(shared_data_dir: Path | str, *, merge_mentions: bool = False) -> dict:
    """Exact-match rate of our A→B paths against SherLIiC-dev's gold paths, with failure classes."""
    sides, unlocated = load_sides(Path(shared_data_dir))
    nlp = load_nlp(ner=False)
    matches = 0
    failures: Counter = Counter()
    by_kind: dict[str, list[int]] = {}
    examples: list[dict] = []
    docs = _documents(sides)
    parsed = parse_documents(docs, nlp=nlp, source="sherliic/dev.tsv", merge_mentions=merge_mentions)
    for side, (document, doc) in zip(sides, parsed, strict=True):
        ours, same_sentence = _our_path(doc, document)
        ok = ours == side.gold or (not side.oriented and reverse_path(ours) == side.gold)
        kind = "template" if side.oriented else "orientation_free"
        kind += "_repaired" if side.repaired else ""
        by_kind.setdefault(kind, [0, 0])
        by_kind[kind][1] += 1
        if ok:
            matches += 1
            by_kind[kind][0] += 1
            continue
        if not side.oriented:
            # Compare in the orientation closer to the gold path for the class.
            rev = reverse_path(ours)
            if labels_of(rev)[:1] == labels_of(side.gold)[:1]:
                ours = rev
        cls = classify(side.gold, ours, side.text) if same_sentence else "sentence_split"
        failures[cls] += 1
        examples.append(
            {
                "id": side.item_id,
                "side": side.side,
                "text": side.text,
                "gold": side.gold,
                "ours": ours,
                "class": cls,
            }
        )
    n = len(sides)
    inexpressible = failures.get("sentence_does_not_express_path", 0)
    return {
        "sides_total": n + sum(unlocated.values()),
        "sides_located": n,
        "unlocated": dict(unlocated),
        "exact_matches": matches,
        "exact_match_rate": matches / n if n else 0.0,
        "expressible_sides": n - inexpressible,
        "exact_match_rate_expressible": matches / (n - inexpressible) if n > inexpressible else 0.0,
        "by_kind": {
            k: {"matches": v[0], "sides": v[1], "rate": v[0] / v[1]} for k, v in sorted(by_kind.items())
        },
        "failure_classes": dict(failures.most_common()),
        "failures": examples,
    }


@click.command(context_settings=CONTEXT)
@version_option
@click.option("-v", "--verbose", is_flag=True, help="List every failure (default: the first 15).")
def cli(verbose: bool) -> None:
    """Exact-match rate of our dependency paths against SherLIiC-dev's (`make fidelity`).

    Needs the shared data folder; writes out/bench/fidelity.json."""
    report = sherliic_fidelity(require_shared_data())
    out = out_folder() / "bench" / "fidelity.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    print(
        f"SherLIiC-dev path fidelity: {report['exact_matches']}/{report['sides_located']} located sides "
        f"= {report['exact_match_rate']:.1%} exact match ({report['sides_total']} sides in total; "
        f"unlocated: {report['unlocated'] or 'none'})"
    )
    print(
        f"  over sides whose sentence can express the gold path: "
        f"{report['exact_match_rate_expressible']:.1%} ({report['expressible_sides']} sides)"
    )
    for kind, v in report["by_kind"].items():
        print(f"  {kind:28s} {v['matches']:4d}/{v['sides']:4d} = {v['rate']:.1%}")
    print("failure classes:")
    for cls, count in report["failure_classes"].items():
        print(f"  {cls:28s} {count}")
    for ex in report["failures"][: None if verbose else 15]:
        print(
            f"  [{ex['class']}] {ex['id']} {ex['side']}: {ex['text']!r}\n"
            f"      gold {ex['gold']}\n      ours {ex['ours']}"
        )
    print(f"written: {out}")


def main(argv: list[str] | None = None) -> int:
    return run(cli, argv, prog_name="python -m benchmarks.fidelity")


if __name__ == "__main__":
    raise SystemExit(main())
