"""The one place adapters are built from settings. Tasks and front doors get adapters here.

Imports are local to each builder so a process only loads what it uses (the CLI never loads
onnxruntime, a worker that never searches never opens the vector store).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragq.errors import ConfigurationError
from ragq.settings import EmbedderKind, ProviderKind, Settings

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from embedding.base import Embedder
    from providers.base import ModelProvider
    from vectorstore.base import VectorStore


def build_ledger_engine(settings: Settings) -> Engine:
    """The SQLAlchemy engine of the ledger (SQLite under $RAGQ_HOME unless a URL is set)."""
    from ledger import make_engine

    return make_engine(settings.ledger_url)


def build_vector_store(settings: Settings) -> VectorStore:
    """The embedded engine under $RAGQ_HOME/vectors, or a Qdrant server when a URL is set."""
    if settings.qdrant_url:
        from vectorstore import QdrantServerStore

        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantServerStore(settings.qdrant_url, api_key=key)
    from vectorstore import EdgeVectorStore

    return EdgeVectorStore(settings.vectors_dir)


def _build_minilm(settings: Settings) -> Embedder:
    from embedding import MiniLmEmbedder

    return MiniLmEmbedder()


def _build_openai(settings: Settings) -> Embedder:
    from embedding import OpenAIEmbedder

    if settings.openai_api_key is None:
        raise ConfigurationError(
            "RAGQ_EMBEDDER=openai needs RAGQ_OPENAI_API_KEY (any value for a local server)"
        )
    return OpenAIEmbedder(
        model=settings.openai_embedding_model,
        dim=settings.openai_embedding_dim,
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key.get_secret_value(),
        timeout_s=settings.openai_timeout_s,
    )


_EMBEDDERS = {EmbedderKind.MINILM: _build_minilm, EmbedderKind.OPENAI: _build_openai}


def build_embedder(settings: Settings) -> Embedder:
    """The embedder named by ``RAGQ_EMBEDDER``."""
    return _EMBEDDERS[settings.embedder](settings)


def _build_offline(settings: Settings, embedder: Embedder) -> ModelProvider:
    from providers.offline import OfflineProvider

    return OfflineProvider(embedder)


def _build_openai_provider(settings: Settings, embedder: Embedder) -> ModelProvider:
    raise ConfigurationError(
        "RAGQ_PROVIDER=openai is not available yet; valid now: "
        + ", ".join(k.value for k in _PROVIDERS if k is not ProviderKind.OPENAI)
    )


_PROVIDERS = {ProviderKind.OFFLINE: _build_offline, ProviderKind.OPENAI: _build_openai_provider}


def build_provider(settings: Settings, embedder: Embedder) -> ModelProvider:
    """The model provider named by ``RAGQ_PROVIDER`` (the offline one needs the embedder)."""
    return _PROVIDERS[settings.provider](settings, embedder)
