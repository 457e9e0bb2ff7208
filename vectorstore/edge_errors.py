"""Translation of qdrant-edge's exceptions into ours, at the adapter boundary.

qdrant-edge (0.9) has no exception classes of its own: engine failures arrive as a plain
``Exception`` whose message carries the engine's error kind, and arguments it cannot convert
arrive as ``ValueError`` / ``TypeError``. The rules below read those messages, most specific
first; anything unrecognised still becomes a ``RetrievalError`` with the engine's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ragq.errors import CollectionNotFoundError, RetrievalError, VectorStoreLockedError
from ragq.vectorstore.errors import CollectionLayoutError, StoreClosedError, VectorDimensionError

_Factory = Callable[[str | None, re.Match[str], str], RetrievalError]


def _dimension(collection: str | None, m: re.Match[str], _msg: str) -> RetrievalError:
    return VectorDimensionError(collection, expected=int(m[1]), got=int(m[2]))


def _incompatible(collection: str | None, m: re.Match[str], _msg: str) -> RetrievalError:
    # On load the engine names the size it was asked for first and the stored size second.
    return VectorDimensionError(collection, expected=int(m[2]), got=int(m[1]))


def _layout(collection: str | None, _m: re.Match[str], msg: str) -> RetrievalError:
    return CollectionLayoutError(
        f"the shard of collection {collection!r} holds other named vectors than ragq's text and "
        f"title ({msg}); ingest into a new collection",
        collection=collection,
    )


def _locked(collection: str | None, _m: re.Match[str], msg: str) -> RetrievalError:
    return VectorStoreLockedError(
        f"the shard of collection {collection!r} is already open elsewhere ({msg}); "
        "only one EdgeVectorStore may own a store root",
        collection=collection,
    )


def _closed(collection: str | None, _m: re.Match[str], msg: str) -> RetrievalError:
    return StoreClosedError(
        f"the shard of collection {collection!r} is closed ({msg})", collection=collection
    )


def _missing(collection: str | None, _m: re.Match[str], msg: str) -> RetrievalError:
    # No ``msg``: the engine's words name the store's path on the server, and users read this.
    return CollectionNotFoundError(
        f"collection {collection!r} does not exist; ingest into it first",
        collection=collection,
    )


_RULES: tuple[tuple[re.Pattern[str], _Factory], ...] = (
    (re.compile(r"dimension error: expected dim: (\d+), got (\d+)"), _dimension),
    (re.compile(r"expected vector size (\d+), but got (\d+)"), _incompatible),
    (re.compile(r"expected vector storages with keys"), _layout),
    (re.compile(r"WouldBlock|Can't init WAL"), _locked),
    (re.compile(r"not initialized"), _closed),
    (re.compile(r"does not exist"), _missing),
)


def edge_error(collection: str | None, exc: BaseException) -> RetrievalError:
    """Our error for one exception raised by qdrant-edge."""
    message = str(exc)
    if isinstance(exc, ValueError | TypeError):
        return RetrievalError(
            f"the embedded engine rejected a point or request for collection {collection!r} "
            f"(point ids must be UUID strings, payloads JSON-like): {message}",
            collection=collection,
        )
    for pattern, factory in _RULES:
        found = pattern.search(message)
        if found:
            return factory(collection, found, message)
    return RetrievalError(
        f"embedded vector engine failed on collection {collection!r}: {message}",
        collection=collection,
    )


@contextmanager
def translate_edge_errors(collection: str | None) -> Iterator[None]:
    """Re-raise qdrant-edge's exceptions from the block as ours, ``from`` the original.

    Only the engine's own kinds are caught (a bare ``Exception``, or ``ValueError`` /
    ``TypeError`` from argument conversion); bugs such as ``AttributeError`` pass through.
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        raise edge_error(collection, exc) from exc
    except Exception as exc:
        if type(exc) is not Exception:
            raise
        raise edge_error(collection, exc) from exc
