"""``/v1/jobs``: submit one question, read it, its evidence and its ledger trail."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body
from starlette.concurrency import run_in_threadpool

from ragq import submission
from ragq.api.deps import CallerDep, SettingsDep
from ragq.errors import InputError, NotFoundError
from ragq.schemas.api import (
    JOB_EVIDENCE_PATH,
    JOB_LEDGER_PATH,
    JOB_PATH,
    JOBS_PATH,
    REF_TEMPLATE,
    ErrorOut,
    JobCreate,
    JobOut,
)
from ragq.settings import Settings
from ragq.submission import Caller

router = APIRouter(tags=["jobs"],
                   responses={401: {"model": ErrorOut}, 404: {"model": ErrorOut},
                              422: {"model": ErrorOut}})


JOB_DOC: dict[str, Any] = {"requestBody": {"required": True, "content": {
    "application/json": {"schema": {"$ref": REF_TEMPLATE.format(model=JobCreate.__name__)}}}}}


def _submit(settings: Settings, body: dict[str, Any], caller: Caller) -> JobOut:
    """The body read as a ticket by the one ticket parser (the same codes as a batch line's);
    ``collection`` is the one field that is not the ticket's."""
    fields = dict(body)
    collection = fields.pop("collection", None)
    if collection is not None and not isinstance(collection, str):
        raise InputError("collection must be a string")
    named_id = "custom_id" in fields
    fields.setdefault("custom_id", "job")
    ticket = submission.ticket_or_refusal(fields, max_question_chars=settings.max_question_chars)
    sent = submission.submit_job(settings, ticket, caller=caller, collection=collection,
                                 custom_id=named_id)
    view = submission.describe(settings, sent.job_id, caller=caller)
    return JobOut(**view, webhook_secret=sent.webhook_secret)


@router.post(JOBS_PATH, status_code=201, response_model=JobOut, openapi_extra=JOB_DOC,
             responses={422: {"model": ErrorOut}})
async def create_job(body: Annotated[dict[str, Any], Body(include_in_schema=False)],
                     settings: SettingsDep, caller: CallerDep) -> JobOut:
    """Submit one question (a ticket, JobCreate); its ACL is capped to the API key's, and a
    refused ticket gets the code a batch line would (``acl_not_allowed``, ``invalid_ticket``,
    ``question_too_long``, ...)."""
    return await run_in_threadpool(_submit, settings, body, caller)


def _job_id(job_id: str) -> str:
    if not job_id.startswith("job_"):
        raise NotFoundError(f"no job {job_id!r}", kind="job", key=job_id)
    return job_id


@router.get(JOB_PATH, response_model=JobOut)
def get_job(job_id: str, settings: SettingsDep, caller: CallerDep) -> JobOut:
    """Status, route and, once ended, the result line."""
    return JobOut(**submission.describe(settings, _job_id(job_id), caller=caller))


@router.get(JOB_EVIDENCE_PATH)
def get_evidence(job_id: str, settings: SettingsDep, caller: CallerDep
                 ) -> list[dict[str, Any]]:
    """Every evidence item the job retrieved (doc, chunk, score, version, in_context)."""
    return submission.evidence(settings, _job_id(job_id), caller=caller)


@router.get(JOB_LEDGER_PATH)
def get_ledger(job_id: str, settings: SettingsDep, caller: CallerDep) -> dict[str, Any]:
    """The job's ledger trail, by table: why it answered what it answered, and what it cost."""
    return submission.trail(settings, _job_id(job_id), caller=caller)
