"""Helpers shared by every reader of input files (corpus formats, type tables, benchmark files, annotation
results): strict line, CSV and JSON reading, error routing, identifier and text checks.

Every input file goes through :func:`check_input_file` (exists, is a readable regular file) and is read
with :func:`read_lines` or :func:`load_json`, which tolerate a UTF-8 byte-order mark and refuse what
Postgres text cannot hold (NUL characters, lone surrogates from JSON escapes); JSON objects may not give
a key twice, nor nest deeper than Python can parse. Identifiers are compared in Unicode NFC (:func:`nfc`).
The checks of a corpus's documents and mentions are extract/formats/documents.py.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import re
import stat
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from warehouse.errors import InputError

BOM = "\ufeff"
# Identifiers (entity ids, type names, type sources, item ids) are keys of btree indexes, whose entries
# must stay under ~2.7 KB: three identifiers of this many UTF-8 bytes fit in one index entry.
MAX_ID_BYTES = 800
# Characters Postgres text cannot store: NUL, and UTF-16 surrogates (only reachable through JSON
# escapes such as \ud800; they are not valid Unicode scalar values and cannot be encoded as UTF-8).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")

# A reader gets an error handler: None = raise the InputError (the load rolls back);
# a callable = the loader's skip_bad counter (the bad record is skipped and counted).
ErrorHandler = Callable[[InputError], None] | None


def nfc(value: str) -> str:
    """An identifier in Unicode NFC, the one form ids are stored and compared in ("é" typed as one
    character or as "e" plus a combining accent is one id)."""
    return unicodedata.normalize("NFC", value) if not value.isascii() else value


def report(error: InputError, on_error: ErrorHandler) -> None:
    """Raise `error`, or hand it to the skip_bad handler."""
    if on_error is None:
        raise error
    on_error(error)


def check_input_file(path: str | Path) -> Path:
    """``path`` if it is a non-empty regular file this process can read; else an InputError saying
    what it is instead (missing, a broken link, a directory, a FIFO or device, unreadable)."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise InputError(str(path), None, f"broken symbolic link to {os.readlink(path)}") from None
        raise InputError(str(path), None, "file not found") from None
    except OSError as exc:
        raise InputError(str(path), None, f"cannot read the file: {exc.strerror}") from None
    if stat.S_ISDIR(mode):
        raise InputError(str(path), None, "is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise InputError(str(path), None, "is not a regular file (a pipe, socket or device)")
    try:
        with path.open("rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise InputError(str(path), None, f"cannot read the file: {exc.strerror}") from None
    if path.stat().st_size == 0:
        raise InputError(str(path), None, "file is empty")
    return path


def unstorable(text: str) -> str | None:
    """What makes ``text`` unstorable in Postgres (``"a NUL character at column 3"``), or None."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    char = found.group()
    what = "a NUL character" if char == "\x00" else f"a lone surrogate U+{ord(char):04X}"
    return f"{what} at column {found.start() + 1}"


def check_text(value: str, what: str, path: str | Path, line: int | None) -> str:
    """``value`` if Postgres can store it (no NUL, no lone surrogate); else an InputError."""
    problem = unstorable(value)
    if problem is not None:
        raise InputError(str(path), line, f"{what} contains {problem} (not storable as text)")
    return value


def check_id(value: str, what: str, path: str | Path, line: int | None) -> str:
    """An identifier: a non-empty string, storable, at most MAX_ID_BYTES bytes of UTF-8."""
    if not isinstance(value, str) or isinstance(value, bool):
        raise InputError(str(path), line, f"{what} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InputError(str(path), line, f"{what} is empty")
    check_text(value, what, path, line)
    size = len(value.encode("utf-8"))
    if size > MAX_ID_BYTES:
        raise InputError(
            str(path), line, f"{what} is {size:,} bytes long; identifiers are limited to {MAX_ID_BYTES} bytes"
        )
    return value


def read_lines(
    path: Path, on_error: ErrorHandler = None, encoding: str = "utf-8"
) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without newline); bad encoding is an InputError naming the line.

    Decoding is per line so the error names the exact line; an empty file is an error of its own. A
    byte-order mark at the start is dropped; a line holding a NUL character is an InputError.
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
            if number == 1:
                line = line.removeprefix(BOM)
            problem = unstorable(line)
            if problem is not None:
                report(InputError(str(path), number, f"line contains {problem}"), on_error)
                continue
            yield number, line.rstrip("\r\n")
    if empty:
        raise InputError(str(path), None, "file is empty")


def csv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each row of a CSV file, read with :func:`read_lines` (UTF-8, BOM
    tolerated, no NUL); a malformed row or a field over the csv module's size limit is an InputError.
    The line number is the row's last line (a quoted field may span lines)."""
    reader = csv.reader(line + "\n" for _, line in read_lines(path))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(str(path), reader.line_num, f"malformed CSV: {exc}") from None
        yield reader.line_num, row


class _DuplicateKey(Exception):
    def __init__(self, key: str):
        self.key = key


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose keys are distinct (json's default keeps the last of a key given twice)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def parse_json(text: str, path: Path, line: int | None) -> object:
    """``text`` as JSON, strictly: malformed JSON, a key given twice in one object, or nesting deeper
    than the parser's recursion limit is an InputError naming the file and line."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise InputError(str(path), where, f"malformed JSON: {exc.msg} at column {exc.colno}") from None
    except _DuplicateKey as exc:
        raise InputError(str(path), line, f"key {exc.key!r} given twice in one JSON object") from None
    except RecursionError:
        raise InputError(str(path), line, "JSON nested too deeply to be read") from None


def json_lines(
    path: Path, on_error: ErrorHandler = None, *, repeats: Counter | None = None
) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line of a JSON-lines file (:func:`parse_json`).
    repeats: drop a line repeated verbatim (whitespace at its ends aside), counted as
    ``repeats["repeated_records"]`` (the same record twice would be stored twice)."""
    seen = False
    digests: set[bytes] = set()
    for number, line in read_lines(path, on_error):
        if not line.strip():
            continue
        seen = True
        if repeats is not None:
            digest = hashlib.blake2b(line.strip().encode("utf-8", "surrogatepass"), digest_size=16).digest()
            if digest in digests:
                repeats["repeated_records"] += 1
                continue
            digests.add(digest)
        try:
            obj = parse_json(line, path, number)
        except InputError as exc:
            report(exc, on_error)
            continue
        if not isinstance(obj, dict):
            report(InputError(str(path), number, "expected a JSON object"), on_error)
            continue
        yield number, obj
    if not seen:
        raise InputError(str(path), None, "file has no records (only blank lines)")


def load_json(path: Path) -> object:
    """Parse a whole-file JSON document (:func:`parse_json`); errors name the line of the problem."""
    path = Path(path)
    raw = path.read_bytes()
    if not raw.strip():
        raise InputError(str(path), None, "file is empty")
    try:
        text = raw.decode("utf-8").removeprefix(BOM)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(str(path), line, f"not valid UTF-8: byte 0x{raw[exc.start]:02x}") from None
    return parse_json(text, path, None)


def require(obj: dict, key: str, kind: type | tuple[type, ...], path: Path, line: int) -> object:
    """obj[key] with a type check; a missing or mistyped field is an InputError. A JSON true/false is
    not an int (bool is an int subclass in Python), and a float must be finite (no NaN/Infinity)."""
    if key not in obj:
        raise InputError(str(path), line, f"missing field '{key}'")
    return _typed(obj[key], f"field '{key}'", kind, path, line)


def optional(obj: dict, key: str, kind: type | tuple[type, ...], path: Path, line: int) -> object | None:
    """obj[key] with the checks of :func:`require`, or None when it is absent, null or empty."""
    value = obj.get(key)
    if value is None or value == "" or value == []:
        return None
    return _typed(value, f"field '{key}'", kind, path, line)


def _typed(value: object, what: str, kind: type | tuple[type, ...], path: Path, line: int) -> object:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        names = "/".join(k.__name__ for k in kinds)
        raise InputError(str(path), line, f"{what} must be {names}, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(str(path), line, f"{what} must be a finite number, got {value}")
    return value


def strings(value: object, what: str, path: Path, line: int) -> list[str]:
    """A JSON list of strings (e.g. aliases, types, tokens); anything else is an InputError."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(str(path), line, f"{what} must be a list of strings")
    return value
