"""The error vocabulary: every ``code`` a user can meet in an errors-file line, an HTTP error body
or a CLI error, with its meaning. The same mistake gets the same code on every path (issue 35);
docs/formats.md shows this table, and a test checks the two agree."""

from __future__ import annotations

TICKET_CODES: dict[str, str] = {
    "invalid_utf8": "The line is not valid UTF-8.",
    "invalid_json": "The line (or option) is not one JSON value.",
    "invalid_ticket": "The ticket breaks the ticket format: a missing, blank, mistyped or "
                      "unknown field, an empty or blank ACL label, a bad budget or route.",
    "question_too_long": "The question is longer than RAGQ_MAX_QUESTION_CHARS.",
    "duplicate_custom_id": "Another ticket of the same input already uses this custom_id.",
    "acl_not_allowed": "The ticket's ACL has no label the API key may read (or a job's result "
                       "is hidden because it ran with labels the key may not read).",
    "invalid_sources": "The ticket names a source the tenant has not registered, or one outside "
                       "its batch's sources.",
    "unknown_collection": "The named collection does not exist or holds no document; ingest "
                          "into it first.",
    "invalid_webhook_url": "The webhook URL is refused (scheme, or a host that is not global).",
}
"""Why one ticket is refused: its errors-file line in a batch, the error of POST /v1/jobs,
``ragq ask`` and ``ragq eval``."""

REQUEST_CODES: dict[str, str] = {
    "invalid_input": "An option or field of the request (not of one ticket) is invalid: a "
                     "collection name, a batch's sources or budget, an empty input.",
    "invalid_request": "The HTTP request body does not validate; `fields` lists each problem.",
    "limit_exceeded": "A limit on the whole input (lines, bytes) is passed; `limit` names it.",
    "unauthorized": "No, an unknown or a revoked API key.",
    "not_found": "No such batch, job or path for this caller.",
    "not_awaiting_review": "The job is not waiting in the review queue.",
    "bad_request": "The request cannot be read (invalid JSON encoding, nesting too deep).",
    "forbidden": "The request is not allowed.",
    "method_not_allowed": "The path does not take this HTTP method.",
    "too_large": "The request body is over RAGQ_MAX_BATCH_BYTES.",
    "unsupported_media_type": "The content type is not one the endpoint reads.",
    "stack_unavailable": "The broker or workers cannot be reached.",
    "ledger_unavailable": "The ledger database cannot be reached.",
    "internal_error": "A bug of ours; the server log has the details.",
}
"""Why a whole request failed."""

JOB_CODES: dict[str, str] = {
    "failed": "An accepted job failed in a worker; the errors file's line has its message.",
}
"""Why an accepted job ended without an answer (its errors-file line)."""

ERROR_CODES: dict[str, str] = TICKET_CODES | REQUEST_CODES | JOB_CODES
