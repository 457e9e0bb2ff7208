"""The review queue: jobs escalated to a human, and their resolution.

A job enters the queue in the transaction that ends it ``needs_review`` (:func:`queue_review`,
called by the flow's ``FinishJob`` writer): for its batch it has ended. A reviewer's resolution
(:func:`resolve_review`) is one conditional update of the job, so two reviewers racing on the
same job cannot both resolve it; it moves the batch's counters, rewrites the job's result line
and records the ``job.reviewed`` webhook event in that same transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ragq.errors import NotAwaitingReviewError
from ragq.ledger.db import rows_changed
from ragq.ledger.errors import LedgerNotFoundError
from ragq.ledger.models import BatchRow, JobRow, ReviewRow, utcnow
from ragq.ledger.results import review_summary
from ragq.ledger.webhooks import record_reviewed_event
from ragq.schemas.statuses import JobStatus, ReviewDecision

__all__ = ["Resolution", "list_reviews", "queue_review", "resolve_review",
           "review_of", "reviewed_result"]


@dataclass(frozen=True)
class Resolution:
    """A reviewer's decision on one job: ``answer`` (the answer to send) for ``answered``,
    ``note`` (why) for either; ``reviewer`` names who decided (an API key's id, or ``cli``)."""

    decision: ReviewDecision
    reviewer: str
    answer: str | None = None
    note: str | None = None


def queue_review(session: Session, *, job_id: str, tenant: str, reasons: list[str],
                 outcome: JobStatus) -> None:
    """Put a job that is ending ``needs_review`` in the queue, once (a redelivered ending
    finds its row)."""
    if session.get(ReviewRow, job_id) is None:
        session.add(ReviewRow(job_id=job_id, tenant=tenant, reasons=list(reasons),
                              outcome=outcome))
        session.flush()


def review_of(session: Session, *, job_id: str) -> ReviewRow | None:
    """The job's review row (None when it was never escalated)."""
    return session.get(ReviewRow, job_id)


def list_reviews(session: Session, *, tenant: str | None, pending: bool = True,
                 limit: int = 100) -> list[tuple[ReviewRow, JobRow]]:
    """Escalated jobs of ``tenant`` (every tenant's for None), oldest first: those still
    waiting (``pending``), else every escalated job, resolved ones included."""
    query = select(ReviewRow, JobRow).join(JobRow, JobRow.id == ReviewRow.job_id)
    if tenant is not None:
        query = query.where(ReviewRow.tenant == tenant)
    if pending:
        query = query.where(ReviewRow.resolved_at.is_(None))
    query = query.order_by(ReviewRow.created_at, ReviewRow.job_id).limit(limit)
    return [(review, job) for review, job in session.execute(query)]


def resolve_review(session: Session, *, job_id: str, resolution: Resolution) -> JobRow:
    """Resolve a job waiting for review: ``completed`` with the reviewer's answer, or
    ``rejected``. The review row, the job's status and result line, its batch's counters and
    the ``job.reviewed`` event change together. Raises LedgerNotFoundError for an unknown job
    and NotAwaitingReviewError when it is not waiting (never escalated, already resolved)."""
    job = session.get(JobRow, job_id)
    if job is None:
        raise LedgerNotFoundError(f"no job {job_id!r}", table="jobs", key=job_id)
    status = (JobStatus.COMPLETED if resolution.decision == ReviewDecision.ANSWERED
              else JobStatus.REJECTED)
    now = utcnow()
    _lock_batch(session, job.batch_id)
    moved = rows_changed(session.execute(update(JobRow).where(
        JobRow.id == job_id, JobRow.status == JobStatus.NEEDS_REVIEW).values(status=status)))
    review = session.get(ReviewRow, job_id)
    if not moved or review is None:
        current = session.scalar(select(JobRow.status).where(JobRow.id == job_id))
        raise NotAwaitingReviewError(
            f"job {job_id!r} is {current}, not awaiting review: only needs_review jobs can be "
            "resolved", job_id=job_id, status=str(current))
    review.decision, review.resolved_at = resolution.decision, now
    review.answer, review.note, review.reviewer = (resolution.answer, resolution.note,
                                                   resolution.reviewer)
    job = session.get(JobRow, job_id, populate_existing=True)
    assert job is not None  # the update above matched it
    job.result = reviewed_result(job.result or {}, review, status)
    if job.batch_id is not None:
        counter = (BatchRow.completed_count if status == JobStatus.COMPLETED
                   else BatchRow.rejected_count)
        session.execute(update(BatchRow).where(BatchRow.id == job.batch_id).values(
            {BatchRow.needs_review_count: BatchRow.needs_review_count - 1,
             counter: counter + 1}))
    session.flush()
    record_reviewed_event(session, job=job)
    return job


def _lock_batch(session: Session, batch_id: str | None) -> None:
    """The batch row before the job's, in the order every job ending takes them."""
    if batch_id is not None:
        session.execute(select(BatchRow.id).where(BatchRow.id == batch_id)
                        .with_for_update(key_share=True))


def reviewed_result(result: dict[str, Any], review: ReviewRow, status: JobStatus
                    ) -> dict[str, Any]:
    """The result line after a resolution: the new status, the reviewer's answer (none for a
    rejection) and ``reviewed`` (decision, who, when, note, the draft answer it replaced).
    Usage, evidence and citations stay what the job found."""
    draft = result.get("answer")
    at: datetime | None = review.resolved_at
    return {**result, "status": str(status),
            "answer": review.answer if status == JobStatus.COMPLETED else None,
            "extractive": False if status == JobStatus.COMPLETED else result.get("extractive"),
            "review": review_summary(review.reasons, review.outcome),
            "reviewed": {"decision": str(review.decision), "reviewer": review.reviewer,
                         "at": at.isoformat() if at else None, "note": review.note,
                         "draft_answer": draft}}
