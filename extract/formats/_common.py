"""Helpers shared by the corpus readers: strict line reading, error routing, mention search."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from deppath.records import Mention
from warehouse.errors import InputError

# A reader gets an error handler: None = raise the InputError (the load rolls back);
# a callable = the loader's skip_bad counter (the bad record is skipped and counted).
ErrorHandler = Callable[[InputError], None] | None


def report(error: InputError, on_error: ErrorHandler) -> None:
    """Raise `error`, or hand it to the skip_bad handler."""
    if on_error is None:
        raise error
    on_error(error)


def read_lines(
    path: Path, on_error: ErrorHandler = None, encoding: str = "utf-8"
) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without newline); bad encoding is an InputError naming the line.

    Decoding is per line so the error names the exact line; an empty file is an error of its own.
    """
    path = Path(path)
    empty = True
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            empty = False
            try:
                line = raw.decode(encoding)
            except UnicodeDecodeError as exc:
                report(
                    InputError(
                        str(path),
                        number,
                        f"not valid {encoding.upper()}: byte 0x{raw[exc.start]:02x} "
                        f"at column {exc.start + 1} "
                        f"(convert the file to {encoding.upper()})",
                    ),
                    on_error,
                )
                continue
            yield number, line.rstrip("\r\n")
    if empty:
        raise InputError(str(path), None, "file is empty")


def json_lines(path: Path, on_error: ErrorHandler = None) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line of a JSON-lines file."""
    seen = False
    for number, line in read_lines(path, on_error):
        if not line.strip():
            continue
        seen = True
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            report(
                InputError(str(path), number, f"malformed JSON: {exc.msg} at column {exc.colno}"), on_error
            )
            continue
        if not isinstance(obj, dict):
            report(InputError(str(path), number, "expected a JSON object"), on_error)
            continue
        yield number, obj
    if not seen:
        raise InputError(str(path), None, "file has no records (only blank lines)")


def load_json(path: Path) -> object:
    """Parse a whole-file JSON document; errors name the line of the problem."""
    path = Path(path)
    raw = path.read_bytes()
    if not raw.strip():
        raise InputError(str(path), None, "file is empty")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(str(path), line, f"not valid UTF-8: byte 0x{raw[exc.start]:02x}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), exc.lineno, f"malformed JSON: {exc.msg} at column {exc.colno}") from None


def require(obj: dict, key: str, kind: type | tuple[type, ...], path: Path, line: int) -> object:
    """obj[key] with a type check; a missing or mistyped field is an InputError."""
    if key not in obj:
        raise InputError(str(path), line, f"missing field '{key}'")
    value = obj[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise InputError(str(path), line, f"field '{key}' must be {names}, got {type(value).__name__}")
    return value


def check_mention(text: str, mention: Mention, path: Path, line: int) -> None:
    """Offsets must lie inside the text and cover a non-empty span."""
    if not (0 <= mention.start < mention.end <= len(text)):
        raise InputError(
            str(path),
            line,
            f"mention offsets [{mention.start}, {mention.end}) of entity {mention.entity_id!r} "
            f"outside the text (length {len(text)})",
        )


def normalise_name(name: str) -> str:
    """Entity id for unlinked (NER) mentions: lower-case, single spaces, no leading 'the'."""
    name = " ".join(name.split()).lower()
    name = re.sub(r"^the ", "", name)
    name = re.sub(r"'s$", "", name)
    return name


def find_surface(text: str, surfaces: Sequence[str], taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """All whole-word, case-sensitive occurrences of the first surface string that occurs in `text`.

    Surfaces are tried in the given order (callers put the label first, then aliases longest first);
    spans overlapping an already-taken span are skipped, so two entities never share characters.
    """
    for surface in surfaces:
        surface = surface.strip()
        if len(surface) < 2:
            continue
        pattern = re.compile(r"(?<!\w)" + re.escape(surface) + r"(?!\w)")
        spans = [
            (m.start(), m.end())
            for m in pattern.finditer(text)
            if not any(m.start() < e and s < m.end() for s, e in taken)
        ]
        if spans:
            return spans
    return []
