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
from ragq.schemas.embedder import Embedder

if TYPE_CHECKING:
    from ragq.embedding.minilm import MiniLmEmbedder


def __getattr__(name: str) -> object:
    """``MiniLmEmbedder`` on first use (PEP 562): the contract and the errors are read by
    processes that never embed, and must not load onnxruntime."""
    if name == "MiniLmEmbedder":
        from ragq.embedding.minilm import MiniLmEmbedder

        return MiniLmEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
