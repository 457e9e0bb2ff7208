"""Both vector store adapters behind one fixture, so every contract test runs on each of them.

``edge``: the embedded engine in a temporary directory. ``memory``: qdrant-client's in-process
mode. ``server``: a real Qdrant server, only when ``RAGQ_TEST_QDRANT_URL`` is set.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ragq.vectorstore import EdgeVectorStore, QdrantServerStore, TitleFusion, VectorStore

QDRANT_URL = os.environ.get("RAGQ_TEST_QDRANT_URL")

ADAPTERS = [
    pytest.param("edge", id="edge"),
    pytest.param("memory", id="qdrant-memory"),
    pytest.param(
        "server",
        id="qdrant-server",
        marks=pytest.mark.skipif(not QDRANT_URL, reason="set RAGQ_TEST_QDRANT_URL to run"),
    ),
]


def open_store(kind: str, tmp_path: Path, fusion: TitleFusion | None = None) -> VectorStore:
    if kind == "edge":
        return EdgeVectorStore(tmp_path / "vectors", fusion=fusion)
    if kind == "memory":
        return QdrantServerStore(":memory:", fusion=fusion)
    assert QDRANT_URL
    api_key = os.environ.get("RAGQ_TEST_QDRANT_API_KEY")
    return QdrantServerStore(QDRANT_URL, api_key=api_key, fusion=fusion)


def _server_collections() -> set[str]:
    from qdrant_client import QdrantClient

    client = QdrantClient(url=QDRANT_URL, api_key=os.environ.get("RAGQ_TEST_QDRANT_API_KEY"))
    try:
        return {c.name for c in client.get_collections().collections}
    finally:
        client.close()


def _drop_server_collections(names: set[str]) -> None:
    """Remove what a test created on a shared server (the store itself never deletes them)."""
    from qdrant_client import QdrantClient

    client = QdrantClient(url=QDRANT_URL, api_key=os.environ.get("RAGQ_TEST_QDRANT_API_KEY"))
    for name in names:
        client.delete_collection(name)
    client.close()


@contextmanager
def opened_store(
    kind: str, tmp_path: Path, fusion: TitleFusion | None = None
) -> Iterator[VectorStore]:
    """An open store of ``kind``, closed afterwards (a server loses what the test created)."""
    on_server = kind == "server"
    before = _server_collections() if on_server else set()
    opened = open_store(kind, tmp_path, fusion)
    try:
        yield opened
    finally:
        opened.close()
        if on_server:
            _drop_server_collections(_server_collections() - before)


@pytest.fixture(params=ADAPTERS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    """An open store of each kind, with the default fusion."""
    with opened_store(request.param, tmp_path) as opened:
        yield opened


@pytest.fixture(params=ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> str:
    """The kind of each adapter, for tests that open stores themselves (see ``opened_store``)."""
    return str(request.param)
