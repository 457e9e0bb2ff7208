"""Translation of qdrant-client's exceptions into ours, at the adapter boundary.

Most specific first: a 429 with ``Retry-After`` before any other HTTP status, HTTP statuses by
a registry, transport failures (refused, timed out) as ``VectorStoreUnavailableError`` so tasks
can retry them, gRPC status codes the same way, and the ``ValueError`` that the in-process
``:memory:`` mode raises for a missing collection as ``CollectionNotFoundError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import grpc
import httpx
from qdrant_client.common.client_exceptions import QdrantException, ResourceExhaustedResponse
from qdrant_client.http.exceptions import (
    ApiException,
    ResponseHandlingException,
    UnexpectedResponse,
)

from ragq.errors import CollectionNotFoundError, RetrievalError
from ragq.vectorstore.errors import VectorStoreUnavailableError

_Factory = Callable[[str | None, str, str], RetrievalError]


def _not_found(collection: str | None, url: str, detail: str) -> RetrievalError:
    # No server address: users read this in a failed job's result.
    return CollectionNotFoundError(
        f"collection {collection!r} does not exist ({detail}); ingest into it first",
        collection=collection,
    )


def _auth(collection: str | None, url: str, detail: str) -> RetrievalError:
    return RetrievalError(
        f"Qdrant at {url} refused the credentials ({detail}): set RAGQ_QDRANT_API_KEY to "
        "the server's API key",
        collection=collection,
    )


def _unavailable(collection: str | None, url: str, detail: str) -> RetrievalError:
    return VectorStoreUnavailableError(
        f"Qdrant at {url} is unavailable ({detail}); retry later", collection=collection
    )


def _other(collection: str | None, url: str, detail: str) -> RetrievalError:
    return RetrievalError(f"Qdrant at {url} failed: {detail}", collection=collection)


_BY_STATUS: dict[int, _Factory] = {
    401: _auth,
    403: _auth,
    404: _not_found,
    408: _unavailable,
    429: _unavailable,
    502: _unavailable,
    503: _unavailable,
    504: _unavailable,
}

_BY_GRPC_CODE: dict[grpc.StatusCode, _Factory] = {
    grpc.StatusCode.NOT_FOUND: _not_found,
    grpc.StatusCode.UNAUTHENTICATED: _auth,
    grpc.StatusCode.PERMISSION_DENIED: _auth,
    grpc.StatusCode.UNAVAILABLE: _unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: _unavailable,
    grpc.StatusCode.RESOURCE_EXHAUSTED: _unavailable,
}


def _status_detail(exc: UnexpectedResponse) -> str:
    try:
        message = exc.structured()["status"]["error"]
    except Exception:  # any non-JSON or oddly shaped body: fall back to the reason phrase
        message = exc.reason_phrase
    return f"HTTP {exc.status_code}: {message}"


def server_error(collection: str | None, url: str, exc: Exception) -> RetrievalError:
    """Our error for one exception raised by qdrant-client (or its transports)."""
    if isinstance(exc, ResourceExhaustedResponse):
        return VectorStoreUnavailableError(
            f"Qdrant at {url} is overloaded ({exc}); retry after {exc.retry_after_s}s",
            collection=collection,
            retry_after_s=float(exc.retry_after_s),
        )
    if isinstance(exc, UnexpectedResponse):
        factory = _BY_STATUS.get(exc.status_code or 0, _other)
        return factory(collection, url, _status_detail(exc))
    if isinstance(exc, ResponseHandlingException):
        if isinstance(exc.source, httpx.TransportError):
            return _unavailable(collection, url, f"{type(exc.source).__name__}: {exc.source}")
        return _other(collection, url, f"unreadable response: {exc.source}")
    if isinstance(exc, grpc.RpcError):
        code = exc.code() if isinstance(exc, grpc.Call) else None
        factory = _BY_GRPC_CODE.get(code, _other) if code is not None else _other
        return factory(collection, url, f"gRPC {code}: {exc}")
    if isinstance(exc, json.JSONDecodeError):
        return _other(collection, url, f"unreadable response: {exc}")
    if isinstance(exc, httpx.TransportError):
        return _unavailable(collection, url, f"{type(exc).__name__}: {exc}")
    if isinstance(exc, ValueError) and "not found" in str(exc):
        return _not_found(collection, url, str(exc))
    return _other(collection, url, f"{type(exc).__name__}: {exc}")


@contextmanager
def translate_server_errors(collection: str | None, url: str) -> Iterator[None]:
    """Re-raise qdrant-client's exceptions from the block as ours, ``from`` the original.

    ``ValueError`` is caught because the ``:memory:`` mode raises it for every refusal; keep
    the block to client calls so a bug of ours is not mistaken for one.
    """
    try:
        yield
    except (ApiException, QdrantException, grpc.RpcError, httpx.HTTPError, ValueError) as exc:
        raise server_error(collection, url, exc) from exc
