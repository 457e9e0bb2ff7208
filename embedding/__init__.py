"""Texts to unit vectors: the interface, the local MiniLM model, and OpenAI-compatible servers.

``MiniLmEmbedder`` is the default: in-process, CPU, offline, from files installed from PyPI.
``OpenAIEmbedder`` calls an OpenAI-compatible ``/embeddings`` endpoint.
"""

from typing import TYPE_CHECKING

from ragq.embedding.base import Embedder
from ragq.embedding.errors import (
    EmbeddingAuthError,
    EmbeddingDimensionError,
    EmbeddingModelMissingError,
    EmbeddingUnavailableError,
)
from ragq.lazy import lazy_exports

if TYPE_CHECKING:
    from ragq.embedding.minilm import MiniLmEmbedder
    from ragq.embedding.openai_compat import OpenAIEmbedder

_LAZY = {
    "MiniLmEmbedder": "ragq.embedding.minilm",
    "OpenAIEmbedder": "ragq.embedding.openai_compat",
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
