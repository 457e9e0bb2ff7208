"""``/v1/batches``: create (JSON or JSONL upload), list, read, results, errors, cancel."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from ragq import submission
from ragq.api.deps import CallerDep, SettingsDep
from ragq.api.upload import JSONL_TYPES, check_declared_length, read_body
from ragq.errors import InputError, NotFoundError
from ragq.schemas.api import (
    BATCH_CANCEL_PATH,
    BATCH_ERRORS_PATH,
    BATCH_PATH,
    BATCH_RESULTS_PATH,
    BATCHES_PATH,
    REF_TEMPLATE,
    BatchCreate,
    BatchList,
    BatchOut,
    CancelOut,
    ErrorOut,
)
from ragq.schemas.ticket import Priority, SourceSelection
from ragq.settings import Settings
from ragq.submission import BatchOptions, Caller

router = APIRouter(tags=["batches"],
                   responses={401: {"model": ErrorOut}, 404: {"model": ErrorOut},
                              422: {"model": ErrorOut}})

UPLOAD_DOC: dict[str, Any] = {"requestBody": {"required": True, "content": {
    "application/json": {"schema": {"$ref": REF_TEMPLATE.format(model=BatchCreate.__name__)}},
    "application/jsonl": {"schema": {"type": "string", "format": "binary"}},
    "multipart/form-data": {"schema": {"type": "object", "properties": {
        "file": {"type": "string", "format": "binary"}, "collection": {"type": "string"},
        "webhook_url": {"type": "string"}, "budget": {"type": "string"},
        "sources": {"type": "string"}, "priority": {"type": "string"}},
        "required": ["file"]}},
}}}


def _created(settings: Settings, sent: submission.Submitted, caller: Caller) -> BatchOut:
    view = submission.describe(settings, sent.batch_id, caller=caller)
    return BatchOut(**view, webhook_secret=sent.webhook_secret)


def _submit_json(settings: Settings, body: BatchCreate, caller: Caller) -> BatchOut:
    lines: Iterable[str] = (json.dumps(t) for t in body.tickets)
    parsed = submission.read_tickets(lines, limits=submission.limits_of(settings),
                                     source="tickets")
    options = BatchOptions(body.webhook_url,
                           body.budget.model_dump(exclude_none=True) if body.budget else None,
                           body.metadata, body.sources, body.priority)
    sent = submission.submit_tickets(settings, parsed, caller=caller, options=options,
                                     collection=body.collection, source=None)
    return _created(settings, sent, caller)


def _submit_jsonl(settings: Settings, raw: Any, fields: dict[str, str], source: str,
                  caller: Caller) -> BatchOut:
    options = BatchOptions(webhook_url=fields.get("webhook_url") or None,
                           budget=_budget_field(fields.get("budget")),
                           sources=_sources_field(fields.get("sources")),
                           priority=_priority_field(fields.get("priority")))
    with raw:  # bytes: each line is decoded alone, so invalid UTF-8 fails only its line
        sent = submission.submit_stream(
            settings, raw, collection=fields.get("collection") or None,
            source=source, caller=caller, options=options)
    return _created(settings, sent, caller)


def _sources_field(text: str | None) -> SourceSelection | None:
    """The sources of a JSONL upload: "all", or comma-separated names (none given: None; one
    that names nothing, such as ",", is refused as ``ragq submit --sources`` refuses it)."""
    return submission.parse_sources(text, source="sources") if text else None


def _priority_field(text: str | None) -> Priority:
    """The priority of a JSONL upload's tickets that name none (default: bulk)."""
    return submission.parse_priority(text, source="priority") if text else Priority.BULK


def _budget_field(text: str | None) -> dict[str, Any] | None:
    """The batch budget of a JSONL upload (a JSON query or form field), validated."""
    return submission.parse_budget(text) if text else None


@router.post(BATCHES_PATH, status_code=201, response_model=BatchOut, openapi_extra=UPLOAD_DOC,
             responses={413: {"model": ErrorOut}, 422: {"model": ErrorOut}})
async def create_batch(
    request: Request, settings: SettingsDep, caller: CallerDep,
    collection: Annotated[str | None, Query(description="For a JSONL upload.")] = None,
    webhook_url: Annotated[str | None, Query(description="For a JSONL upload.")] = None,
    budget: Annotated[str | None, Query(
        description='For a JSONL upload: the batch budget as JSON, e.g. {"max_steps": 20}.')]
    = None,
    sources: Annotated[str | None, Query(
        description='For a JSONL upload: comma-separated sources every ticket may search, '
                    'or "all".')] = None,
    priority: Annotated[str | None, Query(
        description='For a JSONL upload: "interactive" or "bulk" (the default), for the '
                    "tickets that name none.")] = None,
) -> BatchOut:
    """Create a batch from JSON ``{"tickets": [...]}`` or a JSONL upload (raw body or multipart
    ``file``). Bad lines go to the errors file; more lines or bytes than allowed is a 413, an
    over-long question a 422 naming its line."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip()
    if content_type == "application/json":
        check_declared_length(request, settings.max_batch_bytes)
        try:
            body = BatchCreate.model_validate_json(await request.body())
        except ValidationError as exc:
            raise RequestValidationError(exc.errors()) from exc
        return await run_in_threadpool(_submit_json, settings, body, caller)
    if content_type not in JSONL_TYPES and content_type != "multipart/form-data":
        raise InputError(f"unsupported content type {content_type!r}; send application/json, "
                         "application/jsonl or multipart/form-data")
    raw, fields, source = await read_body(request, settings.max_batch_bytes)
    fields = {"collection": collection or "", "webhook_url": webhook_url or "",
              "budget": budget or "", "sources": sources or "", "priority": priority or "",
              **fields}
    return await run_in_threadpool(_submit_jsonl, settings, raw, fields, source, caller)


@router.get(BATCHES_PATH, response_model=BatchList)
def list_batches(
    settings: SettingsDep, caller: CallerDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    after: Annotated[str | None, Query(description="A batch id: list the ones older.")] = None,
) -> BatchList:
    """The caller's batches, newest first."""
    views = submission.list_batch_views(settings, caller=caller, limit=limit + 1, after=after)
    page = [BatchOut(**v) for v in views[:limit]]
    return BatchList(data=page, first_id=page[0].id if page else None,
                     last_id=page[-1].id if page else None, has_more=len(views) > limit)


@router.get(BATCH_PATH, response_model=BatchOut)
def get_batch(batch_id: str, settings: SettingsDep, caller: CallerDep) -> BatchOut:
    """Status, counts by status, timestamps and cost so far."""
    return BatchOut(**submission.describe(settings, batch_id, caller=caller))


def _jsonl(records: list[dict[str, Any]]) -> StreamingResponse:
    lines = (json.dumps(r, default=str, ensure_ascii=False) + "\n" for r in records)
    return StreamingResponse(lines, media_type="application/jsonl")


@router.get(BATCH_RESULTS_PATH, response_class=StreamingResponse,
            responses={200: {"content": {"application/jsonl": {}}}})
def get_results(batch_id: str, settings: SettingsDep, caller: CallerDep) -> StreamingResponse:
    """The results JSONL: one line per accepted ticket, in input order, matched by custom_id."""
    return _jsonl(submission.results(settings, batch_id, caller=caller))


@router.get(BATCH_ERRORS_PATH, response_class=StreamingResponse,
            responses={200: {"content": {"application/jsonl": {}}}})
def get_errors(batch_id: str, settings: SettingsDep, caller: CallerDep) -> StreamingResponse:
    """The errors JSONL: rejected lines (line number, reason), then failed jobs."""
    return _jsonl(submission.errors(settings, batch_id, caller=caller))


@router.post(BATCH_CANCEL_PATH, response_model=CancelOut)
def cancel_batch(batch_id: str, settings: SettingsDep, caller: CallerDep) -> CancelOut:
    """Cancel the open jobs: running ones stop at their next step; finished results are kept."""
    if not batch_id.startswith("bat_"):
        raise NotFoundError(f"no batch {batch_id!r}", kind="batch", key=batch_id)
    count = submission.cancel(settings, batch_id, caller=caller)
    return CancelOut(cancelled_jobs=count,
                     batch=BatchOut(**submission.describe(settings, batch_id, caller=caller)))

