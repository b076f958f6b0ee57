"""spaCy ``DocBin`` files (`--format spacy`): documents as spaCy saves them (``DocBin(docs=…).to_disk``,
the ``.spacy`` files of spaCy pipelines and training data).

- Mentions: the document's entities (``doc.ents``) that carry a knowledge-base id (``ent.kb_id_``, from
  an entity linker or set by hand): the kb id is the entity id, the entity's text its name. Entities
  without a kb id are plain NER entities: ``--ner-mentions`` adds them (id = normalised name) and
  ``--ner-types`` types the linked mentions with their entity label. A file in which no entity has a kb
  id is refused (its documents would load without a mention) unless ``--ner-mentions`` is given.
- Parses: when the file's documents carry a dependency parse with tags and lemmas (what the paths are
  made of: ``doc.has_annotation("DEP")``, ``"TAG"`` and ``"LEMMA"``, e.g. docs saved from a pipeline
  with a parser), the paths come from that parse and spaCy does not run; the labels must be ClearNLP
  (spaCy's English models; Universal Dependencies is refused, as for CoNLL-U). Otherwise the texts are
  parsed like any other format's (``--processes`` applies). The file's first document decides; in a
  file read with its parses, a document without one is refused.
- Document ids: ``doc.user_data["id"]`` (a non-empty string; a DocBin keeps user data when made with
  ``store_user_data=True``), else ``<file name>:<n>``. ``n``, the document's position in the file
  (1-based), stands where other formats give a line number: errors read ``FILE:n: problem``.

A file that is not a DocBin, and a document that cannot be rebuilt from it (also: entity tags that begin
with I instead of B), are refused in one line; with ``--skip-bad`` such a document is skipped and counted.
The file's checksum is over its bytes (it is binary).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from deppath.extraction import extract_doc
from deppath.labels import check_label_set
from deppath.records import Document, ExtractionResult, Mention
from extract.formats import docbin_limits, ner
from extract.formats.base import CorpusReader, PreparsedReader
from files.reading import ErrorHandler, nfc, report
from warehouse.errors import InputError

if TYPE_CHECKING:
    from spacy.tokens import Doc, DocBin

PARSE = ("DEP", "TAG", "LEMMA")  # the annotation the paths are made of
BEGIN = 3  # spaCy's ENT_IOB value of an entity's first token


class SpacyReader(CorpusReader, PreparsedReader):
    """spaCy ``DocBin`` files (`--format spacy`)."""

    def __init__(self) -> None:
        self._loaded: tuple[Path, DocBin] | None = None  # the file read last (its parse is looked at first)

    def brings_parses(self, path: Path) -> bool:
        """Whether the file is read with its own parses: its first readable document has one (a document
        that cannot be read is reported when the file is read)."""
        for doc in self._docs(Path(path), lambda error: None):
            return all(doc.has_annotation(attr) for attr in PARSE)
        return False

    def require_linked_entities(self, path: Path) -> None:
        """InputError unless some entity of the file has a kb id: its mentions are the linked entities, so
        a file without one would load its documents without a mention (the loader skips this check when
        --ner-mentions takes the NER entities as mentions)."""
        from spacy.attrs import ENT_IOB, ENT_KB_ID

        path = Path(path)
        docbin = self._docbin(path)
        if not docbin.tokens:
            return  # no documents: the load says so
        if ENT_KB_ID in docbin.attrs:
            column = docbin.attrs.index(ENT_KB_ID)
            if any(tokens[:, column].any() for tokens in docbin.tokens):
                return
        entities = 0
        if ENT_IOB in docbin.attrs:
            column = docbin.attrs.index(ENT_IOB)
            entities = sum(int((tokens[:, column] == BEGIN).sum()) for tokens in docbin.tokens)
        raise InputError(
            str(path),
            None,
            f"none of the {entities} entities of its {len(docbin.tokens)} documents has a kb_id_, and "
            "the mentions of --format spacy are entities linked to a knowledge base: set each entity's "
            "kb id (doc.ents = [doc.char_span(start, end, label=..., kb_id='Q42')]) before saving the "
            "DocBin, or take the NER entities as mentions with --ner-mentions",
        )

    def read(
        self, path: Path, on_error: ErrorHandler = None, stats: Counter | None = None
    ) -> Iterator[Document]:
        """The documents, for spaCy to parse (their parses, if any, are not used)."""
        path = Path(path)
        for position, doc in enumerate(self._docs(path, on_error), start=1):
            try:
                yield self._document(path, position, doc)
            except InputError as exc:
                report(exc, on_error)

    def read_extracted(
        self,
        path: Path,
        on_error: ErrorHandler = None,
        stats: Counter | None = None,
        *,
        ner_types: bool = False,
        ner_mentions: bool = False,
    ) -> Iterator[tuple[Document, ExtractionResult]]:
        """Each document with the paths of its own parse."""
        path = Path(path)
        stats = stats if stats is not None else Counter()
        for position, doc in enumerate(self._docs(path, on_error), start=1):
            try:
                missing = [attr for attr in PARSE if not doc.has_annotation(attr)]
                if missing:
                    raise InputError(
                        str(path),
                        position,
                        f"doc {position} has no {'/'.join(missing)} annotation while the file's first doc "
                        "is parsed: a DocBin is read with its parses (every doc parsed) or parsed again "
                        "(none parsed)",
                    )
                # "case" alone is ClearNLP's possessive 's in a short document (check_label_set needs
                # a whole parse to tell): only the labels UD alone has count here
                ud = check_label_set(token.dep_ for token in doc)
                if ud is not None and ud != "case":  # every document of such a file is wrong: not skippable
                    raise _Fatal(
                        InputError(
                            str(path),
                            position,
                            f"doc {position}: dependency label {ud!r} is Universal Dependencies; the paths "
                            "need ClearNLP labels (spaCy's English models) or Stanford basic",
                        )
                    )
                document = self._document(path, position, doc)
                if ner_types or ner_mentions:
                    document = ner.augment(document, doc, add_mentions=ner_mentions, type_mentions=ner_types)
                result = extract_doc(doc, document, source=str(path))
                stats["sentences_parsed"] += sum(1 for _ in doc.sents)
                yield document, result
            except _Fatal as fatal:
                raise fatal.error from None
            except InputError as exc:
                report(exc, on_error)

    # -- reading the file ----------------------------------------------------------------------------
    def _docbin(self, path: Path) -> DocBin:
        if self._loaded is not None and self._loaded[0] == path:
            return self._loaded[1]
        from spacy.tokens import DocBin

        try:
            # checked first: spaCy inflates all of it at once
            docbin = DocBin().from_bytes(docbin_limits.docbin_bytes(path))
        except OSError as exc:
            raise InputError(str(path), None, f"cannot read the file: {exc.strerror}") from None
        except InputError:
            raise
        except Exception as exc:  # zlib, msgpack, numpy: whatever the bytes break in the format
            raise InputError(
                str(path),
                None,
                f"not a spaCy DocBin file ({type(exc).__name__}: {' '.join(str(exc).split())[:200]}); "
                "write one with spacy.tokens.DocBin(docs=…).to_disk(path)",
            ) from None
        self._loaded = (path, docbin)
        return docbin

    def _docs(self, path: Path, on_error: ErrorHandler) -> Iterator[Doc]:
        """The file's documents, rebuilt one by one (as DocBin.get_docs does) so that a document that
        cannot be rebuilt is one bad record, named by its position."""
        from spacy.attrs import ORTH
        from spacy.tokens import Doc
        from spacy.vocab import Vocab

        docbin = self._docbin(path)
        vocab = Vocab()
        for string in docbin.strings:
            vocab.strings.add(string)
        orth = docbin.attrs.index(ORTH) if ORTH in docbin.attrs else None
        for index in range(len(docbin.tokens)):
            try:
                if orth is None:
                    raise ValueError("the DocBin stores no ORTH (the words)")
                tokens = docbin.tokens[index]
                spaces = None if docbin.flags[index].get("has_unknown_spaces") else docbin.spaces[index]
                doc = Doc(vocab, words=[vocab.strings[o] for o in tokens[:, orth]], spaces=spaces)
                doc = doc.from_array(docbin.attrs, tokens)
                doc.ents  # noqa: B018 - ValueError (spaCy's E093) for entity tags that begin with I, not B
                if index < len(docbin.user_data) and docbin.user_data[index] is not None:
                    doc.user_data.update(_user_data(docbin.user_data[index]))
            except Exception as exc:  # a document the bytes do not rebuild
                report(
                    InputError(
                        str(path),
                        index + 1,
                        f"doc {index + 1} cannot be read from the DocBin ({type(exc).__name__}: "
                        f"{' '.join(str(exc).split())[:200]})",
                    ),
                    on_error,
                )
                continue
            yield doc

    @staticmethod
    def _document(path: Path, position: int, doc: Doc) -> Document:
        """The document of a Doc: its id, text and linked entities."""
        given = doc.user_data.get("id") if isinstance(doc.user_data, dict) else None
        if given is not None and (not isinstance(given, str) or not given.strip()):
            raise InputError(
                str(path),
                position,
                f"doc {position}: user_data 'id' must be a non-empty string, got {given!r}",
            )
        mentions = tuple(
            Mention(ent.start_char, ent.end_char, nfc(ent.kb_id_), ent.text) for ent in doc.ents if ent.kb_id_
        )
        return Document(given or f"{path.name}:{position}", doc.text, mentions, position)


def _user_data(packed: bytes) -> dict:
    """A document's user_data (ValueError past MAX_USER_DATA_VALUES values), read with plain maps: the id
    is all the reader needs (srsly's own decoders look up their registry at every call, half the time of
    a parsed DocBin's load)."""
    import srsly

    docbin_limits.check_user_data(packed)
    return srsly.msgpack.unpackb(packed, object_pairs_hook=dict, use_list=False, raw=False)


class _Fatal(Exception):
    def __init__(self, error: InputError):
        self.error = error
