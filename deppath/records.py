"""Plain records passed between the corpus readers (extract/formats), path extraction and the loader."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Mention:
    """A linked entity mention: character offsets [start, end) into the document/sentence text."""

    start: int
    end: int
    entity_id: str
    name: str | None = None
    types: tuple[str, ...] = ()  # types given inline by the corpus (e.g. NER labels); may be empty


@dataclass(frozen=True)
class Document:
    """One unit of input text with its mentions, and where it came from (for error messages/provenance)."""

    document_id: str
    text: str
    mentions: tuple[Mention, ...]
    line_number: int  # 1-based line of the input file (first line of the record)
    type_source: str = "corpus"  # source name for the inline mention types


@dataclass(frozen=True)
class PathInstance:
    """A kept dependency path between two mentions of one sentence.

    Canonical orientation: the path is written with the subject end (nsubj/nsubjpass) on the left,
    so arg1 (argument A, left end) is the subject and arg2 (argument B) the right end.
    subject_side says which mention in reading order is the subject (1 = earlier, 2 = later).
    """

    path: str
    arg1_entity_id: str
    arg2_entity_id: str
    subject_side: int
    sentence_text: str = ""
    sentence_index: int = 0


@dataclass
class ExtractionResult:
    """Paths kept for one document plus rejected-path counts keyed by filter rule name."""

    instances: list[PathInstance] = field(default_factory=list)
    rejections: dict[str, int] = field(default_factory=dict)
