"""Texts to unit vectors: the Embedder contract and the local MiniLM model.

``MiniLmEmbedder`` is the default: in-process, CPU, offline, from files installed from PyPI.
The OpenAI-compatible embedder speaks the model provider's API with its client, so it lives
beside it: :class:`ragq.providers.openai.OpenAIEmbedder`. The contract itself is
:class:`ragq.schemas.embedder.Embedder`, re-exported here; the errors are in :mod:`ragq.errors`.
"""

from typing import TYPE_CHECKING

from ragq.errors import (
    EmbeddingAuthError,
    EmbeddingDimensionError,
    EmbeddingError,
    EmbeddingModelMissingError,
    EmbeddingUnavailableError,
)
from ragq.lazy import lazy_exports
from ragq.schemas.embedder import Embedder

if TYPE_CHECKING:
    from ragq.embedding.minilm import MiniLmEmbedder

__getattr__ = lazy_exports(__name__, {"MiniLmEmbedder": "ragq.embedding.minilm"})


__all__ = [
    # the contract (schemas.embedder)
    "Embedder",
    # the local model
    "MiniLmEmbedder",
    # errors (defined in ragq.errors, the one exception tree)
    "EmbeddingError",
    "EmbeddingAuthError",
    "EmbeddingDimensionError",
    "EmbeddingModelMissingError",
    "EmbeddingUnavailableError",
]
