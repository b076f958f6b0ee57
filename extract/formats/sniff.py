"""What a corpus file looks like from its first bytes, checked against the format it is given as: a file
given in the wrong format is one line naming the format it looks like (a DocBin read as JSON lines would
otherwise fail as "not valid UTF-8 at column 2", a JSON file read as a DocBin in msgpack's words).

    check_format(path, "jsonl")   # InputError when the file is a spaCy DocBin
"""

from __future__ import annotations

import zlib
from pathlib import Path

from warehouse.errors import InputError

HEAD_BYTES = 4096  # enough for a DocBin's first msgpack keys or a text's first characters
DOCBIN_FORMAT = "spacy"


def looks_like_docbin(head: bytes) -> bool:
    """Whether bytes start like a spaCy DocBin (``DocBin.to_bytes``): zlib-compressed msgpack, a map
    whose first keys are the DocBin's (version, attrs, ...)."""
    try:
        inflated = zlib.decompressobj().decompress(head, 256)
    except zlib.error:
        return False
    is_map = bool(inflated) and (0x80 <= inflated[0] <= 0x8F or inflated[0] in (0xDE, 0xDF))
    return is_map and b"version" in inflated[:64] and b"attrs" in inflated[:64]


def looks_like_text(head: bytes) -> bool:
    """Whether bytes are UTF-8 text without NUL (a character cut by the end of `head` aside)."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.reason == "unexpected end of data"
    return True


def check_format(path: Path, fmt: str) -> None:
    """An InputError naming what the file looks like when it is plainly not a `fmt` file: a spaCy
    DocBin given as a text format, or text (JSON or other) given as a DocBin."""
    with Path(path).open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    if fmt != DOCBIN_FORMAT and looks_like_docbin(head):
        hint = f"a spaCy DocBin (a binary .spacy file), not {fmt}: use --format spacy"
        raise InputError(str(path), None, f"looks like {hint}")
    if fmt == DOCBIN_FORMAT and looks_like_text(head):
        if head.decode("utf-8", errors="ignore").lstrip("\ufeff \t\r\n").startswith(("{", "[")):
            hint = (
                "JSON text, not a spaCy DocBin: use --format jsonl (the project's JSON lines), fewrel or trex"
            )
        else:
            hint = "text, not a spaCy DocBin (a binary .spacy file): give the text's own --format (jsonl, …)"
        raise InputError(str(path), None, f"looks like {hint}")
