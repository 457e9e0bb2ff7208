"""Embedding errors with their context as attributes; all are ``ragq.errors.EmbeddingError``.

The split lets a task retry what is transient (:class:`EmbeddingUnavailableError`) and stop on
what a retry cannot fix (a missing model, a wrong key, a wrong dimension).
"""

from __future__ import annotations

from ragq.errors import EmbeddingError


class EmbeddingModelMissingError(EmbeddingError):
    """Raised when the local model or tokenizer file is missing or not the pinned file."""


class EmbeddingAuthError(EmbeddingError):
    """Raised when the embeddings server rejects the API key (HTTP 401/403)."""

    def __init__(self, message: str, *, status_code: int | None = None):
        self.status_code = status_code
        super().__init__(message)


class EmbeddingUnavailableError(EmbeddingError):
    """Raised when the embeddings server cannot be reached, times out, rate-limits or fails
    (5xx); worth a retry. ``status_code`` is None for transport failures."""

    def __init__(self, message: str, *, status_code: int | None = None):
        self.status_code = status_code
        super().__init__(message)


class EmbeddingDimensionError(EmbeddingError):
    """Raised when a returned vector's length is not the configured dimension."""

    def __init__(self, model: str, *, expected: int, got: int):
        self.model = model
        self.expected = expected
        self.got = got
        super().__init__(
            f"model {model!r} returned {got}-dimensional vectors but {expected} were configured: "
            f"set RAGQ_OPENAI_EMBEDDING_DIM={got} (and ingest into a new collection)"
        )
