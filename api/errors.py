"""Domain errors to HTTP statuses, in one place; every error body is ``{"error": {...}}``."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ragq.errors import (
    AuthError,
    InputError,
    LimitExceededError,
    NotAwaitingReviewError,
    NotFoundError,
    RagqError,
    StackError,
    WebhookUrlError,
)
from ragq.ledger.errors import LedgerUnavailableError

#: Most specific first: the first class an error is an instance of decides its status and code.
STATUS: list[tuple[type[RagqError], int, str]] = [
    (AuthError, 401, "unauthorized"),
    (NotFoundError, 404, "not_found"),
    (NotAwaitingReviewError, 409, "not_awaiting_review"),
    (WebhookUrlError, 422, "invalid_webhook_url"),
    (InputError, 422, "invalid_input"),
    (StackError, 503, "stack_unavailable"),
    (LedgerUnavailableError, 503, "ledger_unavailable"),
    (RagqError, 500, "internal_error"),
]
TOO_LARGE = {"max_batch_lines", "max_batch_bytes"}


def error_response(exc: RagqError) -> JSONResponse:
    """The response for a domain error."""
    if isinstance(exc, LimitExceededError):
        status = 413 if exc.limit in TOO_LARGE else 422
        body = {"code": "limit_exceeded", "message": str(exc), "line": exc.line,
                "limit": exc.limit}
        return JSONResponse({"error": body}, status_code=status)
    status, code = next((s, c) for cls, s, c in STATUS if isinstance(exc, cls))
    body: dict[str, object] = {"code": code, "message": str(exc)}
    if isinstance(exc, InputError) and exc.line is not None:
        body["line"] = exc.line
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def install(app: FastAPI) -> None:
    """Map every RagqError raised in a route to its response."""

    async def handle(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RagqError)
        return error_response(exc)

    app.add_exception_handler(RagqError, handle)
