"""Texts to unit vectors: the interface, the local MiniLM model, and OpenAI-compatible servers.

``MiniLmEmbedder`` is the default: in-process, CPU, offline, from files installed from PyPI.
``OpenAIEmbedder`` calls an OpenAI-compatible ``/embeddings`` endpoint.
"""

from typing import TYPE_CHECKING

from embedding.base import Embedder
from embedding.errors import (
    EmbeddingAuthError,
    EmbeddingDimensionError,
    EmbeddingModelMissingError,
    EmbeddingUnavailableError,
)
from ragq.lazy import lazy_exports

if TYPE_CHECKING:
    from embedding.minilm import MiniLmEmbedder
    from embedding.openai_compat import OpenAIEmbedder

_LAZY = {
    "MiniLmEmbedder": "embedding.minilm",
    "OpenAIEmbedder": "embedding.openai_compat",
}

__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    # the interface
    "Embedder",
    # implementations
    "MiniLmEmbedder",
    "OpenAIEmbedder",
    # errors (all EmbeddingError; see ragq.errors for the base class)
    "EmbeddingAuthError",
    "EmbeddingDimensionError",
    "EmbeddingModelMissingError",
    "EmbeddingUnavailableError",
]
