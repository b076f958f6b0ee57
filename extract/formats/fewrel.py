"""FewRel / FewRel 2.0 JSON (`--format fewrel`).

The whole file is one JSON object ``{Wikidata property id: [instance, ...]}``; each instance is::

    {"tokens": ["Bill", "Gates", "founded", "Microsoft", "."],
     "h": ["bill gates", "Q5284", [[0, 1]]],
     "t": ["microsoft", "Q2283", [[3]]]}

``h``/``t`` = [lower-cased name, Wikidata QID, list of token-index lists (one per occurrence)]; each
occurrence lists consecutive token indices in increasing order (``[3, 4]``, not ``[4, 3]`` nor ``[]``),
and an argument has at least one occurrence.
The text is the tokens joined by single spaces, except that no space is put before
``, . ; : ! ? ) ] }  's n't %`` and after ``( [ {`` (so spaCy sees ordinary text); the character
offsets of every listed occurrence are computed from that join. The entity name is the covered
surface text of the first occurrence (FewRel's own names are lower-cased).
Line numbers: the line on which the instance starts (FewRel files are usually one long line).
Document ids: ``<file name>:<pid>:<index within the pid>`` (FewRel's files share property ids: the
file name keeps the ids of one corpus's files apart). An instance repeated verbatim within its
property's list is read once (reader stat ``repeated_records``); a key given twice is refused.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from deppath.records import Document, Mention
from extract.formats.base import CorpusReader
from files.reading import ErrorHandler, load_json, report, strings
from warehouse.errors import InputError

_NO_SPACE_BEFORE = {",", ".", ";", ":", "!", "?", ")", "]", "}", "'s", "n't", "%", "'", "'re", "'ve", "'ll"}
_NO_SPACE_AFTER = {"(", "[", "{", "$"}


def detokenize(tokens: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """Join tokens into text; return the text and each token's (start, end) character offsets."""
    parts: list[str] = []
    offsets: list[tuple[int, int]] = []
    pos = 0
    previous = None
    for token in tokens:
        if parts and token not in _NO_SPACE_BEFORE and previous not in _NO_SPACE_AFTER:
            parts.append(" ")
            pos += 1
        offsets.append((pos, pos + len(token)))
        parts.append(token)
        pos += len(token)
        previous = token
    return "".join(parts), offsets


def _mentions(
    arg: object, offsets: list[tuple[int, int]], text: str, path: Path, line: int, which: str
) -> list[Mention]:
    if not (isinstance(arg, list) and len(arg) == 3 and isinstance(arg[1], str) and isinstance(arg[2], list)):
        raise InputError(str(path), line, f"field '{which}' must be [name, QID, [[token indices]]]")
    if not arg[2]:
        raise InputError(str(path), line, f"'{which}' has no token span (its list of occurrences is empty)")
    out = []
    for occurrence in arg[2]:
        if not isinstance(occurrence, list) or not occurrence:
            raise InputError(str(path), line, f"'{which}' token span {occurrence!r} is empty or not a list")
        if not all(type(i) is int and 0 <= i < len(offsets) for i in occurrence):
            raise InputError(
                str(path),
                line,
                f"'{which}' token indices {occurrence} out of range (sentence has {len(offsets)} tokens)",
            )
        if occurrence != list(range(occurrence[0], occurrence[0] + len(occurrence))):
            raise InputError(
                str(path),
                line,
                f"'{which}' token indices {occurrence} are not consecutive and increasing "
                f"(a span of tokens 3 to 4 is [3, 4])",
            )
        start, end = offsets[occurrence[0]][0], offsets[occurrence[-1]][1]
        out.append(Mention(start, end, arg[1], text[start:end]))
    name = out[0].name if out else arg[0]
    return [Mention(m.start, m.end, m.entity_id, name) for m in out]


def _instance_lines(raw: str) -> list[int]:
    """Line of each instance, in file order: the line where its '"tokens":' key appears."""
    lines: list[int] = []
    for number, chunk in enumerate(raw.split("\n"), start=1):
        lines.extend([number] * len(re.findall(r'"tokens"\s*:', chunk)))
    return lines


class FewRelReader(CorpusReader):
    """FewRel / FewRel 2.0 JSON (`--format fewrel`)."""

    alignment = "expand"

    def read(
        self, path: Path, on_error: ErrorHandler = None, stats: Counter | None = None
    ) -> Iterator[Document]:
        path = Path(path)
        stats = stats if stats is not None else Counter()
        data = load_json(path)
        if not isinstance(data, dict):
            raise InputError(str(path), 1, "expected a JSON object {property id: [instances]}")
        line_of = _instance_lines(path.read_text(encoding="utf-8-sig"))
        counter = 0
        for pid, instances in data.items():
            if not isinstance(instances, list):
                raise InputError(str(path), 1, f"value of '{pid}' must be a list of instances")
            seen: set[str] = set()
            for index, inst in enumerate(instances):
                line = line_of[counter] if counter < len(line_of) else 1
                counter += 1
                key = json.dumps(inst, sort_keys=True)
                if key in seen:
                    stats["repeated_records"] += 1
                    continue
                seen.add(key)
                try:
                    if not isinstance(inst, dict) or not isinstance(inst.get("tokens"), list):
                        raise InputError(str(path), line, f"{pid}[{index}]: missing field 'tokens'")
                    for key in ("h", "t"):
                        if key not in inst:
                            raise InputError(str(path), line, f"{pid}[{index}]: missing field '{key}'")
                    tokens = strings(inst["tokens"], f"{pid}[{index}]: field 'tokens'", path, line)
                    text, offsets = detokenize(tokens)
                    mentions = _mentions(inst["h"], offsets, text, path, line, "h") + _mentions(
                        inst["t"], offsets, text, path, line, "t"
                    )
                    yield Document(f"{path.name}:{pid}:{index}", text, tuple(mentions), line)
                except InputError as exc:
                    report(exc, on_error)
