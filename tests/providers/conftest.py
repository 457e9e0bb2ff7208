"""Real parts for the provider tests: the local MiniLM embedder (shipped in PyPI packages, no
download) wrapped in the offline provider."""

from __future__ import annotations

import pytest

from ragq.embedding.minilm import MiniLmEmbedder
from ragq.providers.offline import OfflineProvider
from ragq.providers.offline.similarity import Similarity
from ragq.schemas.flow import Evidence


@pytest.fixture(scope="session")
def embedder() -> MiniLmEmbedder:
    return MiniLmEmbedder(threads=1)


@pytest.fixture(scope="session")
def provider(embedder: MiniLmEmbedder) -> OfflineProvider:
    return OfflineProvider(embedder)


@pytest.fixture(scope="session")
def similarity(embedder: MiniLmEmbedder) -> Similarity:
    return Similarity(embedder)


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: MiniLmEmbedder):
        self.inner, self.texts = inner, 0
        self.dim = inner.dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts += len(texts)
        return self.inner.embed(texts)


def ev(doc: str, text: str, *, title: str = "", score: float = 0.6, index: int = 0,
       chunk: int = 0) -> Evidence:
    """One evidence item; the chunk id is ``doc::chunk``."""
    return Evidence(chunk_id=f"{doc}::{chunk}", doc_id=doc, title=title, text=text, score=score,
                    sub_query_index=index)
