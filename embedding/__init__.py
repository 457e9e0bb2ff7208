"""Texts to unit vectors: the interface, the local MiniLM model, and OpenAI-compatible servers.

``MiniLmEmbedder`` is the default: in-process, CPU, offline, from files installed from PyPI.
``OpenAIEmbedder`` calls an OpenAI-compatible ``/embeddings`` endpoint.
"""

import importlib
from typing import TYPE_CHECKING

from embedding.base import Embedder
from embedding.errors import (
    EmbeddingAuthError,
    EmbeddingDimensionError,
    EmbeddingModelMissingError,
    EmbeddingUnavailableError,
)

if TYPE_CHECKING:
    from embedding.minilm import MiniLmEmbedder
    from embedding.openai_compat import OpenAIEmbedder

# Adapters load on first access: importing the package must not pull in every vendor library
# (a process that only uses one adapter never imports the others' dependencies).
_LAZY = {
    "MiniLmEmbedder": "embedding.minilm",
    "OpenAIEmbedder": "embedding.openai_compat",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


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
