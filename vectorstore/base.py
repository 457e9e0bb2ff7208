"""The vector store interface every adapter implements, and the values that cross it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragq.schemas.metadata import FieldType, MetadataFilter
from ragq.schemas.search import SearchRequest, SparseTerms


@dataclass(frozen=True)
class VectorPoint:
    """One chunk to store: a stable id (a UUID string), its vectors and its payload.

    ``vector`` embeds the chunk as ingest does (title and text). ``title_vector`` embeds its
    document's title alone, with the same model, so a query naming the document finds every
    chunk of it even when a chunk's text is about a sub-topic. ``None`` (no title) stores
    ``vector`` in the title slot too: every point has both, and search needs no special case.
    ``terms`` is the chunk's sparse term vector
    (:func:`~orchestration.sparse_terms.document_terms`) for sparse and hybrid search; None
    leaves the point out of those.
    """

    id: str
    vector: Sequence[float]
    payload: dict[str, Any]
    title_vector: Sequence[float] | None = None
    terms: SparseTerms | None = None


@dataclass(frozen=True)
class Hit:
    """One search result; ``payload`` is the stored payload of the chunk.

    ``score`` is what the hits are ranked by: the fusion of the query's cosine similarity to
    the chunk's text vector (``text_score``) and to its title vector (``title_score``), see
    :mod:`vectorstore.fusion`. The raw scores are None only where an adapter did not compute
    them (fakes); the real adapters report both. ``score`` is that cosine fusion in every search
    mode, so thresholds on it mean the same; the hits are in the mode's order, and
    ``rank_score`` is the mode's own score (the fused cosine, BM25, RRF or DBSF; see
    :mod:`vectorstore.modes`). ``question_score`` is the cosine of the search's ``question``
    vector (the job's whole question, when the caller gave one) with the chunk's text vector;
    None when no question was given.
    """

    id: str
    score: float
    payload: dict[str, Any]
    text_score: float | None = None
    title_score: float | None = None
    rank_score: float | None = None
    question_score: float | None = None


@dataclass(frozen=True)
class SearchFilter:
    """Restrictions a search must honour.

    ``acl``: the requester's labels; a chunk matches when its ``acl`` shares at least one.
    ``None`` means no ACL restriction (administrative use only, e.g. ingest checks).
    ``doc_ids`` / ``source_versions``: when given, only chunks of these documents / versions.
    ``metadata``: validated filters on declared fields (each must hold; see
    :mod:`orchestration.metadata_filters`), read from the chunk's ``meta`` payload.
    """

    acl: tuple[str, ...] | None = None
    doc_ids: tuple[str, ...] | None = None
    source_versions: tuple[str, ...] | None = None
    exclude_doc_ids: tuple[str, ...] = field(default_factory=tuple)
    metadata: tuple[MetadataFilter, ...] = ()


class VectorStore(Protocol):
    """Where chunk vectors live. Implementations translate vendor errors to ``RetrievalError``."""

    def ensure_collection(self, collection: str, dim: int) -> None:
        """Create the collection if missing (named vectors ``text`` and ``title`` of ``dim``,
        cosine distance; the sparse vector ``terms`` with the IDF modifier; keyword indexes
        on ``doc_id``, ``acl``, ``source_version``).

        Raises ``VectorDimensionError`` (a ``RetrievalError``) if it exists with another
        dimension, ``CollectionLayoutError`` if it exists without the two named vectors.
        """

    def index_fields(self, collection: str, fields: Mapping[str, FieldType]) -> None:
        """Create payload indexes on the declared metadata fields (``meta.<name>``; keyword
        for keyword and enum, float for number, datetime for date). Idempotent; raises
        ``CollectionNotFoundError`` before ``ensure_collection``."""

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or overwrite points by id (idempotent for the same ids); durable on return.

        Raises ``CollectionNotFoundError`` before ``ensure_collection``, ``VectorDimensionError``
        for a vector of the wrong length.
        """

    def delete_stale(self, collection: str, doc_id: str, keep_source_version: str) -> int:
        """Delete the chunks of ``doc_id`` whose source_version differs; return how many
        (0 when the collection does not exist). ``keep_source_version=""`` deletes them all."""

    def search(
        self, collection: str, vector: Sequence[float], top_k: int, flt: SearchFilter | None = None,
        request: SearchRequest | None = None, question: Sequence[float] | None = None,
    ) -> list[Hit]:
        """At most ``top_k`` chunks passing ``flt``, best first as ``request`` ranks them
        (None: dense). Dense ranks by fused score: the query's cosine similarity to each
        chunk's text and title vectors, combined as :class:`~vectorstore.fusion.TitleFusion`
        says (the better of the two, the title's lowered by a small margin); sparse and hybrid
        as :mod:`vectorstore.modes` says. A collection without sparse vectors is searched
        dense, with a warning. ``question`` (another vector, e.g. the job's whole question)
        only scores the hits: each gets its cosine to the chunk's text vector as
        ``question_score``; it changes neither which hits nor their order.

        Raises ``CollectionNotFoundError`` for an unknown collection, ``VectorDimensionError``
        for a vector of the wrong length.
        """

    def count(self, collection: str, flt: SearchFilter | None = None) -> int:
        """Exact number of points in the collection matching ``flt`` (0 if it does not exist)."""

    def collections(self) -> list[str]:
        """Names of the existing collections."""

    def close(self) -> None:
        """Wait for calls in flight, flush, release files or connections. Idempotent; later
        calls raise ``StoreClosedError``."""
