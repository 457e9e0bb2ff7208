"""Every error to an HTTP response, in one place; every error body is ``{"error": {...}}``
(``code``, ``message``, and ``line``, ``limit`` or ``fields`` when they apply).

Domain errors map by class; FastAPI's own refusals (a body that does not validate, an unknown
path, a wrong method) get the same shape instead of ``{"detail": ...}``, and never echo the
input back (it may not even be serialisable: a lone surrogate, a NaN). Anything else is a 500
that says no more than that, logged with its traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ragq.errors import (
    AuthError,
    ForbiddenError,
    InputError,
    LimitExceededError,
    NotAwaitingReviewError,
    NotFoundError,
    RagqError,
    StackError,
    TicketRefusedError,
    WebhookUrlError,
)
from ragq.ledger.errors import LedgerUnavailableError

log = logging.getLogger(__name__)

#: Most specific first: the first class an error is an instance of decides its status and code.
STATUS: list[tuple[type[RagqError], int, str]] = [
    (ForbiddenError, 403, "forbidden"),
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
#: Codes of the HTTP errors Starlette and FastAPI raise themselves.
HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
              405: "method_not_allowed", 413: "too_large", 415: "unsupported_media_type"}


def error_body(code: str, message: str, status: int, *,
               headers: Mapping[str, str] | None = None,
               **extra: Any) -> JSONResponse:
    """The one error shape: ``{"error": {"code", "message", **extra}}``."""
    body = {"code": code, "message": message, **{k: v for k, v in extra.items() if v is not None}}
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def error_response(exc: RagqError) -> JSONResponse:
    """The response for a domain error."""
    if isinstance(exc, LimitExceededError):
        status = 413 if exc.limit in TOO_LARGE else 422
        return error_body("limit_exceeded", str(exc), status, line=exc.line, limit=exc.limit)
    if isinstance(exc, TicketRefusedError):  # the code its errors-file line would carry
        return error_body(exc.code, str(exc), 422, line=exc.line)
    status, code = next((s, c) for cls, s, c in STATUS if isinstance(exc, cls))
    line = exc.line if isinstance(exc, InputError) else None
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return error_body(code, str(exc), status, headers=headers, line=line)


def _place(loc: Sequence[Any]) -> str:
    return ".".join(str(p) for p in loc) or "body"


def describe_errors(errors: Sequence[Any]) -> list[dict[str, str]]:
    """Where and why each part of a request is invalid: ``{"field", "message"}``, the input
    itself left out."""
    out = []
    for err in errors:
        message = str(err.get("msg", "invalid"))
        if err.get("type") == "json_invalid":
            message = f"invalid JSON: {err.get('ctx', {}).get('error', 'cannot be parsed')}"
        out.append({"field": _place(err.get("loc", ())), "message": message})
    return out


def validation_response(errors: Sequence[Any]) -> JSONResponse:
    """422 naming every invalid field of a request."""
    fields = describe_errors(errors)
    message = "; ".join(f"{f['field']}: {f['message']}" for f in fields[:5])
    return error_body("invalid_request", message or "invalid request", 422, fields=fields)


def install(app: FastAPI) -> None:
    """Map every error raised in a route (or by the framework) to the one error shape."""

    async def handle(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RagqError)
        return error_response(exc)

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return validation_response(exc.errors())

    async def http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        code = HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
        message = str(exc.detail)
        if exc.status_code == 400 and "parsing the body" in message:  # FastAPI's words
            message = "the request body is not valid JSON (or is nested too deeply)"
        return error_body(code, message, exc.status_code, headers=exc.headers)

    async def crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_body("internal_error", "internal error; see the server log", 500)

    app.add_exception_handler(RagqError, handle)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http)
    app.add_exception_handler(Exception, crash)
