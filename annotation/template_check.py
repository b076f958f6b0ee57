"""Compare the renderer with SherLIiC's own verbalisations (the templates of the shared dev file).

Each template of `sherliic/dev.tsv` (`premise_template` / `hypothesis_template`, e.g.
`region[A] is trading with location[B]`) is re-rendered from its path with the template's own
type names, and compared character for character. Failures are classified so the remaining
differences are visible (simple present vs progressive, noun vs verb reading, passive form, ...).
"""

from __future__ import annotations

import csv
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from deppath.paths import canonical_path
from deppath.render import path_labels, render_relation

_PLACEHOLDER = re.compile(r"(\S*)\[([AB])\]")


@dataclass
class TemplateCheck:
    n_templates: int = 0
    n_exact: int = 0
    n_items: int = 0  # items with both templates
    n_items_exact: int = 0
    failures: list[tuple[str, str, str, str]] = field(default_factory=list)  # path, expected, got, class
    classes: Counter = field(default_factory=Counter)

    @property
    def rate(self) -> float:
        return self.n_exact / self.n_templates if self.n_templates else 0.0

    @property
    def item_rate(self) -> float:
        return self.n_items_exact / self.n_items if self.n_items else 0.0


def template_types(template: str) -> dict[str, str]:
    """{'A': 'region', 'B': 'location'} from `region[A] is trading with location[B]`."""
    return {letter: name for name, letter in _PLACEHOLDER.findall(template)}


def failure_class(expected: str, got: str) -> str:
    """A coarse reason why a rendering differs from SherLIiC's template."""
    strip = lambda s: _PLACEHOLDER.sub(r"[\2]", s).split()  # noqa: E731
    e, g = strip(expected), strip(got)
    if len(e) > 1 and len(g) > 1 and e[0] != g[0]:
        return "argument order"
    if "being" in e and "being" not in g or "being" in g and "being" not in e:
        return "passive: 'is being V-ed' vs 'is V-ed'"
    if g[1:2] == ["is"] and e[1:2] != ["is"]:
        return "simple present expected, progressive rendered"
    if e[1:2] == ["is"] and g[1:2] != ["is"]:
        return "progressive expected, simple present rendered"
    if len(e) > 2 and len(g) > 2 and e[2] != g[2] and (g[2].endswith("ing") or e[2].endswith("ing")):
        return "noun/adjective vs verb reading of the predicate"
    if e[-1] != g[-1] and "'s" in e:
        return "possessive noun differs (template noise)"
    return "other"


def rendered_templates(dev_tsv: Path) -> Iterator[tuple[int, str, str, str]]:
    """(item number, path, template, our rendering) for every template of the dev file."""
    with dev_tsv.open(newline="", encoding="utf-8") as handle:
        for item, row in enumerate(csv.DictReader(handle, delimiter="\t")):
            for side in ("premise", "hypothesis"):
                template = " ".join(row[f"{side}_template"].split())
                if not template:
                    continue
                types = template_types(template)
                path = row[f"{side}_path"]
                yield item, path, template, render_relation(path, types.get("A"), types.get("B")).text


def check_templates(dev_tsv: Path) -> TemplateCheck:
    result = TemplateCheck()
    exact_by_item: dict[int, list[bool]] = defaultdict(list)
    for item, path, template, got in rendered_templates(dev_tsv):
        result.n_templates += 1
        ok = got == template
        exact_by_item[item].append(ok)
        if ok:
            result.n_exact += 1
        else:
            klass = failure_class(template, got)
            result.classes[klass] += 1
            result.failures.append((path, template, got, klass))
    for sides in exact_by_item.values():
        if len(sides) == 2:
            result.n_items += 1
            result.n_items_exact += all(sides)
    return result


def verb_form(template: str) -> str:
    """The form a template gives its predicate: 'passive progressive' ("A is being attacked by B"),
    'is' ("A is trading with B", "A is city of B") or 'simple present' ("A hates B")."""
    words = _PLACEHOLDER.sub(r"[\2]", template).split()
    if "being" in words:
        return "passive progressive"
    return "is" if words[1:2] == ["is"] else "simple present"


@dataclass(frozen=True)
class LexiconEstimate:
    """What a lexicon of predicate forms fitted to the dev templates scores (aspect_lexicon_estimate)."""

    n_templates: int
    in_sample: int  # fitted to every item and scored on the same items
    held_out: int  # fitted to the other folds' items, scored on each fold's


def aspect_lexicon_estimate(dev_tsv: Path, folds: int = 5, seed: int = 0) -> LexiconEstimate:
    """How far a per-predicate lexicon of verb forms, fitted to these very templates, could take the renderer.

    The lexicon maps (the path's labels, its predicate word) to the form most templates of that key use
    (verb_form); a template counts as matched when its form is the lexicon's and the renderer's text is
    right or wrong only in its form (optimistic: a form fix is assumed to fix the rest). Scored in sample
    and on held-out items (folds of whole items, seeded): the gap shows how much of such a lexicon is
    memorised dev templates rather than a rule that carries to other items.
    """
    rows = []  # (item, key, template form, renderer right, renderer's form)
    for item, path, template, got in rendered_templates(dev_tsv):
        labels, words = path_labels(canonical_path(path)[0])
        rows.append((item, (labels, words[0]), verb_form(template), got == template, verb_form(got)))
    items = sorted({r[0] for r in rows})
    random.Random(seed).shuffle(items)
    fold_of = {item: i % folds for i, item in enumerate(items)}

    def matched(fitted: list[tuple], scored: list[tuple]) -> int:
        counts: dict[tuple, Counter] = defaultdict(Counter)
        for _, key, form, _, _ in fitted:
            counts[key][form] += 1
        hits = 0
        for _, key, form, right, rendered_form in scored:
            chosen = counts[key].most_common(1)[0][0] if key in counts else rendered_form
            hits += chosen == form and (right or rendered_form != form)
        return hits

    held_out = sum(
        matched([r for r in rows if fold_of[r[0]] != f], [r for r in rows if fold_of[r[0]] == f])
        for f in range(folds)
    )
    return LexiconEstimate(len(rows), matched(rows, rows), held_out)
