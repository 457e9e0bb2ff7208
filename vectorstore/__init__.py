"""Where chunk vectors live: the interface, its two adapters, and the errors they raise.

``EdgeVectorStore`` is the embedded engine (one owning process, files under ``$RAGQ_HOME``);
``QdrantServerStore`` talks to a Qdrant server, or runs in memory for tests. Both give a
``SearchFilter`` the same meaning (:mod:`vectorstore.filters`) and score a search alike: each
point holds a ``text`` and a ``title`` vector, fused as :mod:`vectorstore.fusion` says, and a
sparse ``terms`` vector; a search ranks dense, sparse or hybrid as :mod:`vectorstore.modes` says.
"""

from typing import TYPE_CHECKING

from ragq.vectorstore.base import Hit, SearchFilter, VectorPoint, VectorStore
from ragq.vectorstore.errors import (
    CollectionLayoutError,
    EdgeStoreLockedError,
    InvalidCollectionNameError,
    InvalidVectorError,
    StoreClosedError,
    VectorDimensionError,
    VectorStoreUnavailableError,
)
from ragq.vectorstore.filters import KEYWORD_FIELDS, AnyOf, FilterPlan, plan_search, plan_stale
from ragq.vectorstore.fusion import TEXT, TITLE, VECTOR_NAMES, ScoredPoint, TitleFusion
from ragq.vectorstore.modes import RRF_K, TERMS

if TYPE_CHECKING:
    from ragq.vectorstore.edge import EdgeVectorStore
    from ragq.vectorstore.server import QdrantServerStore


def __getattr__(name: str) -> object:
    """The two stores on first use (PEP 562): each pulls in its own engine (``qdrant_edge``,
    ``qdrant_client``), and a process uses one of them, or none when it only reads the
    values that cross the interface."""
    if name == "EdgeVectorStore":
        from ragq.vectorstore.edge import EdgeVectorStore

        return EdgeVectorStore
    if name == "QdrantServerStore":
        from ragq.vectorstore.server import QdrantServerStore

        return QdrantServerStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    # the interface and the values that cross it
    "VectorStore",
    "VectorPoint",
    "Hit",
    "SearchFilter",
    # adapters
    "EdgeVectorStore",
    "QdrantServerStore",
    # filter semantics shared by the adapters
    "AnyOf",
    "FilterPlan",
    "KEYWORD_FIELDS",
    "plan_search",
    "plan_stale",
    # how a chunk's text and title similarities become one score
    "TitleFusion",
    "ScoredPoint",
    "TEXT",
    "TITLE",
    "VECTOR_NAMES",
    # dense, sparse and hybrid search (the mode values themselves are in ragq.schemas.search)
    "TERMS",
    "RRF_K",
    # errors (all RetrievalError; see ragq.errors for the base classes)
    "CollectionLayoutError",
    "EdgeStoreLockedError",
    "InvalidCollectionNameError",
    "InvalidVectorError",
    "StoreClosedError",
    "VectorDimensionError",
    "VectorStoreUnavailableError",
]
