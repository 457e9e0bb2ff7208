"""The one exception tree of ragq: catch :class:`RagqError` to catch everything we raise."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragq.schemas.flow import Usage


class RagqError(Exception):
    """Raised when ragq itself refuses or fails; the root of every error we define."""


class ConfigurationError(RagqError):
    """Raised when settings or options are invalid or contradict each other."""


class StackError(RagqError):
    """Raised when the embedded stack cannot be started, reached or stopped."""


class TaskDeadlineError(RagqError):
    """Raised when a task's work would run past the task's bound (``RAGQ_TASK_TIME_LIMIT_S``).

    ``what`` names the work that was stopped, ``remaining_s`` the time that was left.
    """

    def __init__(self, what: str, *, remaining_s: float):
        self.what = what
        self.remaining_s = remaining_s
        super().__init__(f"{what} stopped: {remaining_s:.1f}s left of the task's bound "
                         "(RAGQ_TASK_TIME_LIMIT_S); a smaller batch would fit")


class InputError(RagqError):
    """Raised when user input (a file, a line, an option) is malformed.

    ``source`` names the file and ``line`` the 1-based line number, when known.
    """

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.source = source
        self.line = line
        where = f"{source}:{line}: " if source and line else (f"{source}: " if source else "")
        super().__init__(f"{where}{message}")


class TicketRefusedError(InputError):
    """Raised when one ticket is refused where it cannot fail alone in an errors file
    (``POST /v1/jobs``, ``ragq ask``, ``ragq eval``). ``code`` is its code in the error
    vocabulary (``ragq.schemas.error_codes``), ``custom_id`` the ticket's when known."""

    def __init__(self, message: str, *, code: str, source: str | None = None,
                 line: int | None = None, custom_id: str | None = None):
        self.code = code
        self.custom_id = custom_id
        super().__init__(message, source=source, line=line)


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
    """Raised when texts cannot be embedded (model missing, server error, bad dimension).

    The subclasses let a task retry what is transient (:class:`EmbeddingUnavailableError`) and
    stop on what a retry cannot fix (a missing model, a wrong key, a wrong dimension).
    """


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


class ProviderError(RagqError):
    """Raised when a model provider fails in a way its fallbacks cannot absorb.

    ``role`` and ``model`` name the call, ``status_code`` the HTTP answer (None for transport
    failures), and ``usage`` (a ``schemas.flow.Usage``) lists the attempts made, so the caller can
    still write every attempt to the ledger.
    """

    def __init__(self, message: str, *, role: str | None = None, model: str | None = None,
                 status_code: int | None = None, usage: Usage | None = None):
        self.role = role
        self.model = model
        self.status_code = status_code
        self.usage = usage
        super().__init__(message)


class ProviderAuthError(ProviderError):
    """Raised when the model server rejects the API key (HTTP 401/403); never retried."""


class ProviderModelNotFoundError(ProviderError):
    """Raised when the model server does not know the configured model (HTTP 404); never
    retried."""


class NotFoundError(InputError):
    """Raised when an id names no batch or job the caller may see (unknown, or another tenant's).

    ``kind`` is ``"batch"`` or ``"job"`` and ``key`` the id that was asked for.
    """

    def __init__(self, message: str, *, kind: str, key: str):
        self.kind = kind
        self.key = key
        super().__init__(message)


class LimitExceededError(InputError):
    """Raised when a submission passes a limit (lines, bytes, question length); nothing is kept.

    ``limit`` names the setting (e.g. ``max_batch_lines``), ``line`` the 1-based line when known.
    """

    def __init__(self, message: str, *, limit: str, source: str | None = None,
                 line: int | None = None):
        self.limit = limit
        super().__init__(message, source=source, line=line)


class AuthError(RagqError):
    """Raised when an API key is missing, unknown or revoked."""


class ForbiddenError(AuthError):
    """Raised when a valid API key asks for what its tenant may not do (an operator's
    setting)."""


class WebhookError(RagqError):
    """Raised when a webhook cannot be configured, signed, verified or sent."""


class WebhookUrlError(WebhookError):
    """Raised when a webhook target URL is refused (scheme, or a private/loopback address).

    ``url`` is the refused URL and ``reason`` says why.
    """

    def __init__(self, message: str, *, url: str, reason: str):
        self.url = url
        self.reason = reason
        super().__init__(message)


class WebhookSignatureError(WebhookError):
    """Raised when a received webhook's signature or timestamp does not verify."""


class WebhookSendError(WebhookError):
    """Raised when a webhook request gets no HTTP answer (connect error, timeout, bad URL).

    ``url`` is the target; ``retryable`` says whether trying again may help.
    """

    def __init__(self, message: str, *, url: str, retryable: bool = True):
        self.url = url
        self.retryable = retryable
        super().__init__(message)


class ReviewError(RagqError):
    """Raised when a review-queue operation is refused."""


class NotAwaitingReviewError(ReviewError):
    """Raised when a resolution names a job that is not in the review queue (never escalated,
    already resolved, or still running). ``job_id`` and its ``status`` say which and why."""

    def __init__(self, message: str, *, job_id: str, status: str):
        self.job_id = job_id
        self.status = status
        super().__init__(message)


class ReviewInputError(InputError):
    """Raised when a resolution is malformed: neither or both of an answer and a rejection, or
    an empty answer."""
