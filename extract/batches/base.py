"""The batch store's shared pieces (:mod:`extract.batches.store` is the way in): what a batch is
(:class:`BatchClaim`), what its load did (:class:`BatchSummary`), the messages both engines give, and
the two interfaces each engine implements (:class:`BatchWriter`, :class:`BatchStore`).
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from warehouse.errors import InputError

MAX_KEPT_ERRORS = 20  # bad-record messages kept in load_batches.options with skip_bad
# load_batches' count columns and the keys of a load's counts they are taken from
COUNT_COLUMNS = ("n_documents", "n_sentences", "n_mentions", "n_instances", "n_rows", "n_bad_lines")
COUNT_KEYS = ("documents", "sentences", "mentions", "instances", "rows", "bad_lines")
# the options that change what a load writes (not how fast): compared when the same content comes again
LOAD_KEY_OPTIONS = (
    "limit",
    "ner_types",
    "ner_mentions",
    "reader_options",
    "type_source",
    "alignment",
    "spacy_model",
)


# -- what a batch is and what its load did ---------------------------------------------------------------
def file_checksum(path: Path, extra: bytes = b"") -> str:
    """sha256 of a file's bytes (and of `extra`, e.g. options that change what the file loads as)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    digest.update(extra)
    return digest.hexdigest()


def text_checksum(path: Path) -> str:
    """sha256 of a text file's content, independent of its layout: line endings (LF or CRLF), whitespace
    at the end of lines, blank lines at the end of the file and a UTF-8 byte-order mark do not count (no
    text format gives them a meaning; the readers drop them), so the same content saved by another editor
    or system is the same batch. Binary files take :func:`file_checksum`."""
    digest = hashlib.sha256()
    blank = 0  # blank lines held back: they count only when a non-blank line follows
    with Path(path).open("rb") as handle:
        handle.seek(3 if handle.read(3) == b"\xef\xbb\xbf" else 0)
        for line in handle:  # lines end at LF, as the readers read them
            line = line.rstrip()  # the CR of CRLF and other trailing whitespace
            if not line:
                blank += 1
                continue
            digest.update(b"\n" * blank + line + b"\n")
            blank = 0
    return digest.hexdigest()


@dataclass(frozen=True)
class BatchClaim:
    """One batch to load: where it comes from, what it holds, and how a load treats what is there."""

    path: Path | str  # the input as the user named it (messages); a Path is stored resolved
    fmt: str
    kind: str  # corpus | types | type_map | benchmark
    checksum: str
    options: dict = field(default_factory=dict)
    corpus: str | None = None  # corpus batches only
    replace: bool = False
    # by_path: a source holds one version of one file (other content there is refused unless replacing).
    # Benchmark files turn it off: one file loads as several dataset/split batches.
    by_path: bool = True
    # supersede: a derived file whose new content replaces the old batch from the same source
    supersede: bool = False
    # other checksums the same content may be recorded under (text files loaded before their checksum
    # ignored the layout were recorded with the sha256 of their bytes)
    same_content: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return str(Path(self.path).resolve()) if isinstance(self.path, Path) else self.path

    @property
    def checksums(self) -> list[str]:
        """The checksum and its equivalents: a loaded batch with any of them holds this content."""
        return [self.checksum, *(c for c in self.same_content if c != self.checksum)]


@dataclass
class BatchSummary:
    """What one load did. ``skipped``: the content was already loaded (nothing written)."""

    batch_id: int | None
    source_file: str
    source_format: str
    kind: str
    corpus_name: str | None = None
    skipped: bool = False
    replaced_batches: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    rejections: dict[str, int] = field(default_factory=dict)
    reader_stats: dict[str, int] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)  # the first messages of skipped records
    bad_line_numbers: list[int] = field(default_factory=list)  # the lines of skipped records
    # what the load found out while writing, recorded in the batch's options (e.g. the parser)
    recorded: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    message: str = ""
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RemovedBatches:
    """What a removal deleted: the load_batches rows and the rows per raw table."""

    batches: list[dict] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    not_found: list[str] = field(default_factory=list)  # with missing_ok: the unknown batches/corpora


def load_key(options: dict) -> dict:
    return {k: options[k] for k in LOAD_KEY_OPTIONS if options.get(k) not in (None, False, {})}


def skip_message(claim: BatchClaim, batch_id: int, old_options: dict, old_corpus: str | None) -> str:
    """Why a file is not loaded again (the same content is already batch `batch_id`)."""
    if old_corpus != claim.corpus:
        return (
            f"{claim.path}: already loaded as batch {batch_id} of corpus {old_corpus!r} (same content); "
            f"nothing loaded — a file belongs to one corpus: use --replace to load it as corpus "
            f"{claim.corpus!r} instead"
        )
    if load_key(old_options) != load_key(claim.options):
        return (
            f"{claim.path}: already loaded as batch {batch_id} with other options {load_key(old_options)}; "
            f"nothing loaded — use --replace to reload with {load_key(claim.options)}"
        )
    return (
        f"{claim.path}: already loaded as batch {batch_id} (same content, format {claim.fmt}); "
        "nothing loaded — use --replace to reload it"
    )


def changed_content_error(claim: BatchClaim, batch_id: int) -> InputError:
    return InputError(
        str(claim.path),
        None,
        f"a different version of this file is already loaded as batch {batch_id} (its content changed "
        "since); nothing loaded — use --replace to load the new content in its place",
    )


def finish_summary(summary: BatchSummary, claim: BatchClaim, counts: dict[str, int]) -> dict:
    """Fill a loaded batch's summary (counts, message); returns the options load_batches records."""
    summary.counts = counts
    options = dict(claim.options)
    if summary.reader_stats:
        options["reader_stats"] = summary.reader_stats
    if summary.bad_lines:
        options["bad_lines"] = summary.bad_lines
    if summary.bad_line_numbers:
        options["bad_line_numbers"] = summary.bad_line_numbers
    options.update(summary.recorded)
    verb = "replaced and loaded" if summary.replaced_batches else "loaded"
    shown = ", ".join(f"{k} {v:,}" for k, v in counts.items() if v)
    summary.message = f"{claim.path}: {verb} as batch {summary.batch_id} ({shown or 'no rows'})"
    if summary.reader_stats:  # e.g. mentions not found by the Google-RE matching rule
        summary.message += "; reader: " + ", ".join(
            f"{k} {v:,}" for k, v in sorted(summary.reader_stats.items())
        )
    return options


def batches_not_found(batch_ids: list[int], corpora: list[str], loaded: list[str]) -> InputError:
    """The error of a removal naming batches or corpora that are not there (nothing was removed)."""
    parts = [
        f"no batch {', '.join(map(str, batch_ids))}" if batch_ids else "",
        f"no corpus {', '.join(map(repr, corpora))}" if corpora else "",
    ]
    return InputError(
        "raw.load_batches",
        None,
        f"{' and '.join(p for p in parts if p)} (corpora loaded: {', '.join(loaded) or 'none'}; "
        "`sherliic-extract batches` lists the batches); nothing removed",
    )


# -- writing a batch's rows ----------------------------------------------------------------------------
class BatchWriter(ABC):
    """Writes the rows of one batch being loaded (every row gets the batch's id). ``summary`` is the
    batch's :class:`BatchSummary`: the loader fills in what the counts do not say (rejections, reader
    stats, bad-record messages, timings) before ``write`` returns; the store records it."""

    def __init__(self, summary: BatchSummary):
        self.summary = summary

    @property
    def batch_id(self) -> int:
        return self.summary.batch_id

    @abstractmethod
    def write_rows(
        self, table: str, columns: Sequence[str], rows: Iterable[tuple], *, distinct: bool = False
    ) -> int:
        """Append `rows` (values of `columns`, without batch_id) to raw.<table>; `distinct`: each distinct
        row once (tables whose keys are sets). Returns the rows written."""

    @abstractmethod
    def count(self, table: str, expression: str = "count(*)") -> int:
        """``select <expression>`` over this batch's rows of raw.<table> (SQL both engines share)."""

    @abstractmethod
    def corpus_document_ids(self, corpus: str) -> set[str]:
        """The document ids of the corpus's loaded batches (raw.documents; document ids are unique
        within a corpus)."""

    @abstractmethod
    def document_origin(self, corpus: str, document_id: str) -> str:
        """Where a loaded document of the corpus comes from: ``file:line (batch N)``."""


# -- the store ---------------------------------------------------------------------------------------
class BatchStore(ABC):
    """raw.load_batches of one warehouse (open with :func:`open_batch_store`)."""

    @abstractmethod
    def load(self, claim: BatchClaim, write: Callable[[BatchWriter], dict[str, int]]) -> BatchSummary:
        """Load one batch: claim it, ``write(writer)`` its rows, publish it (module doc)."""

    @abstractmethod
    def batches(self, *, corpus: str | None = None, kind: str | None = None) -> list[dict]:
        """Every batch (any status), oldest first; optionally of one corpus or kind."""

    @abstractmethod
    def remove(
        self, *, batch_ids: Iterable[int] = (), corpora: Iterable[str] = (), missing_ok: bool = False
    ) -> RemovedBatches:
        """Delete batches (by id, and every batch of the named corpora, any status) with all their rows:
        an unknown batch id or corpus name removes nothing (an InputError naming it) unless
        ``missing_ok`` (then it is in ``not_found``). The marts keep the old graph until the next build,
        except the view relation_instances, which shows only the sentences still loaded."""

    def loaded_corpora(self) -> list[str]:
        """The names of the corpora with a loaded batch."""
        rows = self.batches(kind="corpus")
        return sorted({row["corpus_name"] for row in rows if row["status"] == "loaded"} - {None})


def removal_names(batch_ids: Iterable[int], corpora: Iterable[str]) -> tuple[list[int], list[str]]:
    """The batch ids and corpus names a removal names, sorted and distinct; ValueError if none."""
    batch_ids, corpora = sorted(set(batch_ids)), sorted(set(corpora))
    if not batch_ids and not corpora:
        raise ValueError("name the batches to remove (batch ids or corpus names)")
    return batch_ids, corpora
