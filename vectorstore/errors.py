"""Retrieval errors that only the vector store raises, each carrying its context as attributes.

They subclass the ``ragq.errors`` retrieval tree, so callers that catch ``RetrievalError`` (or
``VectorStoreLockedError``) keep working; the subclasses let a task tell a transient outage
(retry) from a configuration mistake (do not).
"""

from __future__ import annotations

from pathlib import Path

from ragq.errors import RetrievalError, VectorStoreLockedError


class VectorDimensionError(RetrievalError):
    """Raised when a vector's length differs from the dimension its collection was built with."""

    def __init__(self, collection: str | None, *, expected: int, got: int):
        self.expected = expected
        self.got = got
        super().__init__(
            f"collection {collection!r} holds {expected}-dimensional vectors but got {got}: "
            "search it with the embedder it was ingested with, or ingest into a new collection",
            collection=collection,
        )


class CollectionLayoutError(RetrievalError):
    """Raised when a collection exists without the named ``text`` and ``title`` vectors ragq
    searches (made by another program, or by ragq before title vectors)."""


class InvalidCollectionNameError(RetrievalError):
    """Raised when a collection name could not be a directory and a Qdrant collection alike."""


class InvalidVectorError(RetrievalError):
    """Raised when a vector holds NaN or infinite values (the engines would silently miss)."""


class StoreClosedError(RetrievalError):
    """Raised when a vector store is used after :meth:`close`."""


class VectorStoreUnavailableError(RetrievalError):
    """Raised when a Qdrant server cannot be reached, times out or sheds load; worth a retry.

    ``retry_after_s`` is the server's hint when it sent one.
    """

    def __init__(
        self, message: str, *, collection: str | None = None, retry_after_s: float | None = None
    ):
        self.retry_after_s = retry_after_s
        super().__init__(message, collection=collection)


class EdgeStoreLockedError(VectorStoreLockedError):
    """Raised when another process (``owner_pid``) owns the embedded store at ``lock_path``."""

    def __init__(self, lock_path: Path, owner_pid: int | None):
        self.lock_path = lock_path
        self.owner_pid = owner_pid
        owner = f"process {owner_pid}" if owner_pid is not None else "another process"
        super().__init__(
            f"the embedded vector store at {lock_path.parent} is owned by {owner} "
            f"(lock file {lock_path}); only one process may open it: route vector tasks to "
            "the worker that owns it, stop that process, or use another RAGQ_HOME"
        )
