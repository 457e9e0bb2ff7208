"""The one exception tree of ragq: catch :class:`RagqError` to catch everything we raise."""

from __future__ import annotations


class RagqError(Exception):
    """Raised when ragq itself refuses or fails; the root of every error we define."""


class ConfigurationError(RagqError):
    """Raised when settings or options are invalid or contradict each other."""


class StackError(RagqError):
    """Raised when the embedded stack cannot be started, reached or stopped."""


class InputError(RagqError):
    """Raised when user input (a file, a line, an option) is malformed.

    ``source`` names the file and ``line`` the 1-based line number, when known.
    """

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.source = source
        self.line = line
        where = f"{source}:{line}: " if source and line else (f"{source}: " if source else "")
        super().__init__(f"{where}{message}")


class LedgerError(RagqError):
    """Raised when the ledger database cannot be reached, migrated or written."""


class RetrievalError(RagqError):
    """Raised when the vector store cannot serve a search or a write."""

    def __init__(self, message: str, *, collection: str | None = None):
        self.collection = collection
        super().__init__(message)


class VectorStoreLockedError(RetrievalError):
    """Raised when another process already owns the embedded vector store."""


class CollectionNotFoundError(RetrievalError):
    """Raised when a search names a collection that was never ingested."""


class EmbeddingError(RagqError):
    """Raised when texts cannot be embedded (model missing, server error, bad dimension)."""


class ProviderError(RagqError):
    """Raised when a model provider fails in a way its fallbacks cannot absorb."""
