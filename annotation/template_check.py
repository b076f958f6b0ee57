"""Compare the renderer with SherLIiC's own verbalisations (the templates of the shared dev file).

Each template of `sherliic/dev.tsv` (`premise_template` / `hypothesis_template`, e.g.
`region[A] is trading with location[B]`) is re-rendered from its path with the template's own
type names, and compared character for character. Failures are classified so the remaining
differences are visible (simple present vs progressive, noun vs verb reading, passive form, ...).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from deppath.render import render_relation

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


def check_templates(dev_tsv: Path) -> TemplateCheck:
    result = TemplateCheck()
    with dev_tsv.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            item_ok = []
            for side in ("premise", "hypothesis"):
                template = " ".join(row[f"{side}_template"].split())
                if not template:
                    continue
                types = template_types(template)
                got = render_relation(row[f"{side}_path"], types.get("A"), types.get("B")).text
                result.n_templates += 1
                ok = got == template
                item_ok.append(ok)
                if ok:
                    result.n_exact += 1
                else:
                    klass = failure_class(template, got)
                    result.classes[klass] += 1
                    result.failures.append((row[f"{side}_path"], template, got, klass))
            if len(item_ok) == 2:
                result.n_items += 1
                result.n_items_exact += all(item_ok)
    return result
