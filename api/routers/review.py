"""``/v1/review``: the review queue, and a reviewer's resolution of one job in it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool

from ragq import submission
from ragq.api.deps import CallerDep, SettingsDep
from ragq.errors import NotFoundError
from ragq.schemas.api import (
    REVIEW_PATH,
    REVIEWS_PATH,
    ErrorOut,
    JobOut,
    ReviewItem,
    ReviewList,
    ReviewResolve,
)

router = APIRouter(tags=["review"],
                   responses={401: {"model": ErrorOut}, 404: {"model": ErrorOut},
                              422: {"model": ErrorOut}})


@router.get(REVIEWS_PATH, response_model=ReviewList)
def list_review(settings: SettingsDep, caller: CallerDep,
                limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                resolved: Annotated[bool, Query(
                    description="Also list resolved reviews, with their resolution.")] = False,
                ) -> ReviewList:
    """The key's jobs waiting for a reviewer (tenant's, within the key's ACL), oldest first:
    question, draft answer, citations, contradictions and why each was escalated."""
    items = submission.review_queue(settings, caller=caller, pending=not resolved, limit=limit)
    return ReviewList(data=[ReviewItem(**item) for item in items])


@router.post(REVIEW_PATH, response_model=JobOut,
             responses={409: {"model": ErrorOut}, 422: {"model": ErrorOut}})
async def resolve_review(job_id: str, body: ReviewResolve, settings: SettingsDep,
                         caller: CallerDep) -> JobOut:
    """Resolve a ``needs_review`` job: ``{"answer": "…"}`` completes it with that answer,
    ``{"reject": true, "reason": "…"}`` rejects it. 409 when the job is not awaiting review."""
    if not job_id.startswith("job_"):
        raise NotFoundError(f"no job {job_id!r}", kind="job", key=job_id)
    resolution = submission.resolution_of(answer=body.answer, reject=body.reject,
                                          note=body.reason, reviewer=caller.name)
    view = await run_in_threadpool(submission.resolve, settings, job_id, resolution,
                                   caller=caller)
    return JobOut(**view)
