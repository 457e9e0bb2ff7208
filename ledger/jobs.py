"""Batches and jobs: submission, status, cancellation and the end of a job.

A job ends exactly once: :func:`finish_job` is a conditional update, so a redelivered finalize
task neither rewrites the result nor bumps the batch counters twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.orm import Session

from ragq.ledger.errors import LedgerNotFoundError
from ragq.ledger.models import (
    TERMINAL_JOB_STATUSES,
    BatchInputErrorRow,
    BatchRow,
    BatchStatus,
    JobRow,
    JobStatus,
    table_of,
    utcnow,
)
from ragq.ledger.results import build_result
from ragq.ledger.webhooks import record_batch_event, record_job_event
from ragq.orchestration.batches import BatchTransition, on_cancel, on_job_finished, on_start

__all__ = [
    "add_job",
    "batch_errors",
    "batch_jobs",
    "cancel_batch",
    "cancel_job",
    "create_batch",
    "finish_job",
    "get_batch",
    "get_job",
    "list_batches",
    "record_input_error",
    "set_job_status",
    "start_batch",
]

_COUNTER = {
    JobStatus.COMPLETED: BatchRow.completed_count,
    JobStatus.INSUFFICIENT_EVIDENCE: BatchRow.insufficient_evidence_count,
    JobStatus.BUDGET_EXHAUSTED: BatchRow.budget_exhausted_count,
    JobStatus.NEEDS_REVIEW: BatchRow.needs_review_count,
    JobStatus.REJECTED: BatchRow.rejected_count,
    JobStatus.FAILED: BatchRow.failed_count,
    JobStatus.CANCELLED: BatchRow.cancelled_count,
}
_OPEN = [s for s in JobStatus if s not in TERMINAL_JOB_STATUSES]
_JOBS = table_of(JobRow)
# Every step of every job moves its status: one Core statement, built once (the ORM's bulk
# UPDATE also evaluated it against the session's objects).
_SET_STATUS = (update(_JOBS).where(_JOBS.c.id == bindparam("b_job_id"), _JOBS.c.status.in_(_OPEN))
               .values(status=bindparam("status"),
                       started_at=func.coalesce(_JOBS.c.started_at,
                                                bindparam("now", type_=_JOBS.c.started_at.type))))
# A job's end, once per job, in the same Core form; the batch's counter likewise.
_FINISH = (update(_JOBS).where(_JOBS.c.id == bindparam("b_job_id"), _JOBS.c.status.in_(_OPEN))
           .values({c: bindparam(c, type_=_JOBS.c[c].type) for c in (
               "status", "result", "stop_reason", "error", "exhausted_dimension", "finished_at")}))
_BATCHES = table_of(BatchRow)


def create_batch(
    session: Session, *, tenant: str, collection: str, input_filename: str | None,
    budget: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None,
    webhook_url: str | None = None, webhook_secret: str | None = None,
) -> BatchRow:
    """A new batch in ``validating``; jobs are added, then :func:`start_batch` opens it."""
    row = BatchRow(tenant=tenant, collection=collection, input_filename=input_filename,
                   budget=budget, meta=metadata or {}, webhook_url=webhook_url,
                   webhook_secret=webhook_secret)
    session.add(row)
    session.flush()
    return row


def add_job(
    session: Session, *, batch_id: str | None, custom_id: str | None, position: int | None,
    tenant: str, collection: str, question: str, acl: Sequence[str],
    metadata: dict[str, Any] | None = None, priority: str = "bulk",
) -> JobRow:
    """A queued job; ``metadata`` carries the ticket's budget, route override and metadata,
    ``priority`` (interactive or bulk) its place in its tenant's share of the waiting line."""
    row = JobRow(batch_id=batch_id, custom_id=custom_id, position=position, tenant=tenant,
                 collection=collection, question=question, acl=list(acl), meta=metadata or {},
                 priority=priority)
    session.add(row)
    session.flush()
    return row


def record_input_error(
    session: Session, *, batch_id: str, line: int, custom_id: str | None, code: str, message: str
) -> None:
    """An input line that never became a job, for the batch's errors file."""
    session.add(BatchInputErrorRow(batch_id=batch_id, line=line, custom_id=custom_id, code=code,
                                   message=message))


def start_batch(session: Session, *, batch_id: str) -> BatchRow:
    """Count a validated batch's jobs and open it: ``in_progress``, or straight to ``completed``
    when it has none (the decision is :func:`orchestration.batches.on_start`)."""
    batch = get_batch(session, batch_id=batch_id)
    batch.total_count = _count(session, JobRow.batch_id == batch_id)
    batch.invalid_count = int(session.scalar(
        select(func.count()).select_from(BatchInputErrorRow)
        .where(BatchInputErrorRow.batch_id == batch_id)) or 0)
    batch.started_at = utcnow()
    _apply(session, batch, on_start(BatchStatus(batch.status), total_jobs=batch.total_count),
           at=batch.started_at)
    return batch


def _apply(session: Session, batch: BatchRow, step: BatchTransition,
           at: datetime | None = None) -> None:
    """Write a decided transition; the one that ends the batch stamps ``finished_at`` (``at``,
    default now) and records the batch's webhook event in this same transaction."""
    batch.status = step.status
    if step.ended:
        batch.finished_at = batch.finished_at or at or utcnow()
        session.flush()
        record_batch_event(session, batch=batch)


def get_batch(session: Session, *, batch_id: str) -> BatchRow:
    """Raises LedgerNotFoundError for an unknown id."""
    row = session.get(BatchRow, batch_id)
    if row is None:
        raise LedgerNotFoundError(f"no batch {batch_id!r}", table="batches", key=batch_id)
    return row


def get_job(session: Session, *, job_id: str) -> JobRow:
    """Raises LedgerNotFoundError for an unknown id."""
    row = session.get(JobRow, job_id)
    if row is None:
        raise LedgerNotFoundError(f"no job {job_id!r}", table="jobs", key=job_id)
    return row


def set_job_status(session: Session, *, job_id: str, status: JobStatus) -> bool:
    """Move an open job to another open status; False when the job already ended (e.g. was
    cancelled), which tells the caller to stop."""
    result = session.connection().execute(
        _SET_STATUS, {"b_job_id": job_id, "status": status, "now": utcnow()})
    return bool(result.rowcount)


def finish_job(
    session: Session, *, job_id: str, status: JobStatus, result: dict[str, Any] | None,
    stop_reason: str | None = None, error: dict[str, Any] | None = None,
    exhausted_dimension: str | None = None,
) -> bool:
    """End a job once: True for the call that ended it; the batch's counters move with it."""
    if status not in TERMINAL_JOB_STATUSES:
        raise ValueError(f"{status} is not a terminal status")
    _lock_batch_of(session, job_id)
    done = session.connection().execute(_FINISH, {
        "b_job_id": job_id, "status": status, "result": result, "stop_reason": stop_reason,
        "error": error, "exhausted_dimension": exhausted_dimension, "finished_at": utcnow(),
    }).rowcount
    if not done:
        return False
    job = session.get(JobRow, job_id, populate_existing=True)
    assert job is not None  # the update above just matched it
    if job.batch_id is not None:
        _count_finished(session, job.batch_id, status)
    record_job_event(session, job=job)
    return True


def _lock_batch(session: Session, batch_id: str) -> None:
    # FOR NO KEY UPDATE: what an UPDATE of the row takes, no more (inserts of rows that
    # reference the batch still proceed).
    session.execute(select(BatchRow.id).where(BatchRow.id == batch_id)
                    .with_for_update(key_share=True))


def _lock_batch_of(session: Session, job_id: str) -> None:
    """Lock the job's batch row before the job's own: ending a job (job, then the batch's
    counters) and cancelling a batch (batch, then each job) would otherwise take the two
    locks in opposite orders and deadlock on PostgreSQL."""
    batch_id = session.scalar(select(JobRow.batch_id).where(JobRow.id == job_id))
    if batch_id is not None:
        _lock_batch(session, batch_id)


def _count_finished(session: Session, batch_id: str, status: JobStatus) -> None:
    column = _BATCHES.c[_COUNTER[status].key]
    session.connection().execute(update(_BATCHES).where(_BATCHES.c.id == batch_id)
                                 .values({column: column + 1}))
    open_jobs = _count(session, JobRow.batch_id == batch_id, JobRow.status.in_(_OPEN))
    batch = session.get(BatchRow, batch_id, populate_existing=True)
    assert batch is not None  # the job references it
    _apply(session, batch, on_job_finished(BatchStatus(batch.status), open_jobs=open_jobs))


def cancel_job(session: Session, *, job_id: str) -> bool:
    """Cancel an open job: tasks see it at their next step and enqueue nothing more."""
    get_job(session, job_id=job_id)
    result = build_result(session, job_id=job_id, status=JobStatus.CANCELLED,
                          stop_reason="cancelled")
    return finish_job(session, job_id=job_id, status=JobStatus.CANCELLED, result=result,
                      stop_reason="cancelled")


def cancel_batch(session: Session, *, batch_id: str) -> int:
    """Cancel every open job of a batch; finished results are kept. Returns how many."""
    _lock_batch(session, batch_id)
    batch = get_batch(session, batch_id=batch_id)
    open_ids = session.scalars(
        select(JobRow.id).where(JobRow.batch_id == batch_id, JobRow.status.in_(_OPEN))
    ).all()
    _apply(session, batch, on_cancel(BatchStatus(batch.status), open_jobs=len(open_ids)))
    # Flushed before the jobs end: the last one's end reloads the batch and must see
    # ``cancelling`` to make it ``cancelled``.
    session.flush()
    return sum(cancel_job(session, job_id=j) for j in open_ids)


def batch_jobs(session: Session, *, batch_id: str) -> list[JobRow]:
    """The batch's jobs in input order."""
    return list(session.scalars(
        select(JobRow).where(JobRow.batch_id == batch_id).order_by(JobRow.position)))


def list_batches(session: Session, *, tenant: str, limit: int, after: str | None = None
                 ) -> list[BatchRow]:
    """A tenant's batches, newest first, ``limit`` of them, starting after the batch id
    ``after`` (ids sort by creation time, so the id is the cursor)."""
    query = select(BatchRow).where(BatchRow.tenant == tenant)
    if after:
        query = query.where(BatchRow.id < after)
    return list(session.scalars(query.order_by(BatchRow.id.desc()).limit(limit)))


def batch_errors(session: Session, *, batch_id: str) -> list[BatchInputErrorRow]:
    """Rejected input lines in line order."""
    return list(session.scalars(select(BatchInputErrorRow)
                                .where(BatchInputErrorRow.batch_id == batch_id)
                                .order_by(BatchInputErrorRow.line)))


def _count(session: Session, *conditions: Any) -> int:
    return int(session.scalar(select(func.count()).select_from(JobRow).where(*conditions)) or 0)
