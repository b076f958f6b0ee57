"""What reading a spaCy DocBin may cost, checked before spaCy reads it (extract/formats/docbin.py).

A DocBin is zlib-compressed msgpack: a few megabytes of file can inflate to gigabytes (spaCy's
``DocBin.from_bytes`` inflates all of it at once), and every msgpack value becomes a Python object (an
empty map: one byte of msgpack, 64 of memory). So a file is first inflated as a stream, a megabyte at a
time and never kept, while its values are counted without being built; one over a limit is refused in
one line. The limits (docs/design.md §2.1):

- MAX_DOCBIN_BYTES: what the file inflates to (a parsed DocBin takes ~100 bytes per token: ~10M tokens);
- MAX_DOCBIN_VALUES: its msgpack values (each string, and a few per document);
- MAX_USER_DATA_VALUES: the values of one document's ``user_data`` (the reader only needs its id).
"""

from __future__ import annotations

import io
import zlib
from pathlib import Path
from typing import Protocol

from warehouse.errors import InputError

MAX_DOCBIN_BYTES = 1 << 30
MAX_DOCBIN_VALUES = 20_000_000
MAX_USER_DATA_VALUES = 100_000
CHUNK = 1 << 20  # inflated bytes held at a time while checking


class Source(Protocol):
    def read(self, n: int) -> bytes: ...
    def skip(self, n: int) -> None: ...


class Inflated:
    """What zlib `data` inflates to, read front to back with at most CHUNK inflated bytes in memory;
    ``position``: the inflated bytes read or skipped so far."""

    def __init__(self, data: bytes):
        self._inflater, self._input = zlib.decompressobj(), data
        self._buffer, self._offset, self.position = b"", 0, 0

    def _more(self) -> bool:
        """The next inflated chunk into the buffer; False at the end of the stream or of the data (a
        truncated stream: spaCy's reader says so); zlib.error for data that is not zlib."""
        if self._inflater.eof:
            return False
        pending = self._inflater.unconsumed_tail if self._input is None else self._input
        self._input = None
        chunk = self._inflater.decompress(pending, CHUNK)
        self._buffer, self._offset = self._buffer[self._offset :] + chunk, 0
        return bool(chunk)

    def read(self, n: int) -> bytes:
        while len(self._buffer) - self._offset < n and self._more():
            pass
        out = self._buffer[self._offset : self._offset + n]
        self._offset += len(out)
        self.position += len(out)
        return out

    def skip(self, n: int) -> None:
        while n > 0:
            available = len(self._buffer) - self._offset
            if available == 0 and not self._more():
                return
            taken = min(n, len(self._buffer) - self._offset)
            self._offset, self.position, n = self._offset + taken, self.position + taken, n - taken

    def skip_past(self, limit: int) -> None:
        """Skip to the end, or to just past `limit` inflated bytes."""
        self.skip(limit + 1 - self.position)


# msgpack type byte -> bytes that follow it (nil, booleans, numbers, fixext: type byte and data)
_FIXED_SIZE = {
    0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
    0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17,
}  # fmt: skip
# type byte -> (bytes of its length, bytes between the length and the data): bin, str, ext
_SIZED = {0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0), 0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0),
          0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1)}  # fmt: skip
# type byte -> (bytes of its count, values per counted item): array16/32, map16/32
_CONTAINERS = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}


def msgpack_values(source: Source | bytes, limit: int) -> int:
    """How many values the msgpack document in `source` holds (every string, number, map, array, ...,
    and each map's keys), counted up to limit + 1 without building them. Stops early at bytes that are
    not msgpack or end too soon (spaCy's reader then refuses them)."""
    if isinstance(source, bytes):
        source = _Bytes(source)
    pending, count = 1, 0
    while pending and count <= limit:
        head = source.read(1)
        if not head:
            break
        code, pending, count = head[0], pending - 1, count + 1
        if code <= 0x7F or code >= 0xE0:  # fixint
            continue
        if code <= 0x8F:  # fixmap
            pending += 2 * (code & 0x0F)
        elif code <= 0x9F:  # fixarray
            pending += code & 0x0F
        elif code <= 0xBF:  # fixstr
            source.skip(code & 0x1F)
        elif code in _FIXED_SIZE:
            source.skip(_FIXED_SIZE[code])
        elif code in _SIZED:
            width, extra = _SIZED[code]
            source.skip(extra + int.from_bytes(source.read(width), "big"))
        elif code in _CONTAINERS:
            width, per_item = _CONTAINERS[code]
            pending += per_item * int.from_bytes(source.read(width), "big")
        else:  # 0xc1: never used by msgpack
            break
    return count


class _Bytes(io.BytesIO):
    def skip(self, n: int) -> None:
        self.seek(n, io.SEEK_CUR)


def docbin_bytes(path: Path) -> bytes:
    """The bytes of the DocBin file at `path` once they inflate to at most MAX_DOCBIN_BYTES holding at
    most MAX_DOCBIN_VALUES values (InputError otherwise; OSError if it cannot be read). Bytes that are not
    zlib data pass: spaCy's reader says what they are."""
    if path.stat().st_size > MAX_DOCBIN_BYTES:
        raise InputError(str(path), None, _too_large(f"is larger than {MAX_DOCBIN_BYTES:,} bytes"))
    data = path.read_bytes()
    inflated = Inflated(data)
    try:
        values = msgpack_values(inflated, MAX_DOCBIN_VALUES)
        inflated.skip_past(MAX_DOCBIN_BYTES)  # the bytes after its msgpack document count too
    except zlib.error:
        return data
    if inflated.position > MAX_DOCBIN_BYTES:
        raise InputError(str(path), None, _too_large(f"inflates to more than {MAX_DOCBIN_BYTES:,} bytes"))
    if values > MAX_DOCBIN_VALUES:
        raise InputError(
            str(path), None, _too_large(f"holds more than {MAX_DOCBIN_VALUES:,} values (strings, maps, ...)")
        )
    return data


def check_user_data(packed: bytes) -> None:
    """ValueError if a document's packed user_data holds more than MAX_USER_DATA_VALUES values."""
    if msgpack_values(packed, MAX_USER_DATA_VALUES) > MAX_USER_DATA_VALUES:
        raise ValueError(f"its user_data holds more than {MAX_USER_DATA_VALUES:,} values")


def _too_large(problem: str) -> str:
    return (
        f"the DocBin {problem}, the limit of --format spacy (a bound on the memory its reading takes); "
        "split it into smaller DocBins"
    )
