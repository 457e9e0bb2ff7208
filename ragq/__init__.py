"""ragq core: settings and the exception tree (adapters are built in ragq.workers.wiring)."""

from ragq.errors import (
    CollectionNotFoundError,
    ConfigurationError,
    EmbeddingAuthError,
    EmbeddingDimensionError,
    EmbeddingError,
    EmbeddingModelMissingError,
    EmbeddingUnavailableError,
    InputError,
    LedgerError,
    ProviderAuthError,
    ProviderError,
    ProviderModelNotFoundError,
    RagqError,
    RetrievalError,
    StackError,
    TicketRefusedError,
    VectorStoreLockedError,
)
from ragq.settings import EmbedderKind, ProviderKind, Settings, build_settings

__all__ = [
    # settings
    "EmbedderKind",
    "ProviderKind",
    "Settings",
    "build_settings",
    # errors
    "CollectionNotFoundError",
    "ConfigurationError",
    "EmbeddingError",
    "EmbeddingAuthError",
    "EmbeddingDimensionError",
    "EmbeddingModelMissingError",
    "EmbeddingUnavailableError",
    "InputError",
    "LedgerError",
    "ProviderAuthError",
    "ProviderError",
    "ProviderModelNotFoundError",
    "RagqError",
    "RetrievalError",
    "StackError",
    "TicketRefusedError",
    "VectorStoreLockedError",
]
