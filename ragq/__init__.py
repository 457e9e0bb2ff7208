"""ragq core: settings, the exception tree and the one place adapters are built."""

from ragq.errors import (
    CollectionNotFoundError,
    ConfigurationError,
    EmbeddingError,
    InputError,
    LedgerError,
    ProviderAuthError,
    ProviderError,
    ProviderModelNotFoundError,
    RagqError,
    RetrievalError,
    StackError,
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
    "InputError",
    "LedgerError",
    "ProviderAuthError",
    "ProviderError",
    "ProviderModelNotFoundError",
    "RagqError",
    "RetrievalError",
    "StackError",
    "VectorStoreLockedError",
]
