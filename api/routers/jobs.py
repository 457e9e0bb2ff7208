"""``/v1/jobs``: submit one question, read it, its evidence and its ledger trail."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from ragq import submission
from ragq.api.deps import CallerDep, SettingsDep
from ragq.errors import InputError, LimitExceededError, NotFoundError
from ragq.schemas.api import (
    JOB_EVIDENCE_PATH,
    JOB_LEDGER_PATH,
    JOB_PATH,
    JOBS_PATH,
    ErrorOut,
    JobCreate,
    JobOut,
)
from ragq.schemas.ticket import Ticket
from ragq.settings import Settings
from ragq.submission import Caller

router = APIRouter(tags=["jobs"],
                   responses={401: {"model": ErrorOut}, 404: {"model": ErrorOut},
                              422: {"model": ErrorOut}})


def _ticket(settings: Settings, body: JobCreate) -> Ticket:
    if len(body.question.strip()) > settings.max_question_chars:
        raise LimitExceededError(
            f"question is {len(body.question.strip())} characters, over the limit of "
            f"{settings.max_question_chars} (RAGQ_MAX_QUESTION_CHARS)",
            limit="max_question_chars", line=1)
    data = body.model_dump(exclude_none=True, exclude={"collection"})
    data.setdefault("custom_id", "job")
    try:
        return Ticket.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"invalid job: {submission.describe_ticket_error(exc)}") from exc


def _submit(settings: Settings, body: JobCreate, caller: Caller) -> JobOut:
    sent = submission.submit_job(settings, _ticket(settings, body), caller=caller,
                                 collection=body.collection or settings.collection,
                                 custom_id=body.custom_id is not None)
    view = submission.describe(settings, sent.job_id, caller=caller)
    return JobOut(**view, webhook_secret=sent.webhook_secret)


@router.post(JOBS_PATH, status_code=201, response_model=JobOut,
             responses={422: {"model": ErrorOut}})
async def create_job(body: JobCreate, settings: SettingsDep, caller: CallerDep) -> JobOut:
    """Submit one question; its ACL is capped to the API key's."""
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
