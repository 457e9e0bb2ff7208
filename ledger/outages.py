"""Time lost to a crashed process is not the jobs' to pay.

A job's latency limit is a deadline from its start (``job_budgets.deadline_at``). When the
resident supervisor has replaced a dead process it knows how long the outage lasted — from the
last moment the process (or the oldest step it held) was known good to the moment its
replacement was ready — and moves every open job's deadline by that much. The sweeper, which
sees no process, measures the outage a job went through in the ledger — how long nothing moved
it before its lost step was sent again — and moves that job's deadline by that much.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragq.ledger.models import JobBudgetRow, JobRow
from ragq.schemas.statuses import TERMINAL_JOB_STATUSES

__all__ = ["extend_open_deadlines"]


def extend_open_deadlines(session: Session, *, by: timedelta,
                          job_ids: Collection[str] | None = None) -> int:
    """Move the deadline of every job that has not ended (of ``job_ids`` only, when given: the
    jobs an outage held up) by ``by``; returns how many moved.

    Jobs that ended keep theirs; jobs without a deadline (no latency limit) are left alone.
    Raises ValueError for a negative ``by``: an outage never gives time back.
    """
    if by < timedelta(0):
        raise ValueError(f"an outage lasts a positive time, got {by}")
    open_jobs = select(JobRow.id).where(JobRow.status.not_in(list(TERMINAL_JOB_STATUSES)))
    if job_ids is not None:
        open_jobs = open_jobs.where(JobRow.id.in_(list(job_ids)))
    rows = session.scalars(
        select(JobBudgetRow).where(JobBudgetRow.deadline_at.is_not(None),
                                   JobBudgetRow.job_id.in_(open_jobs))
        .with_for_update()).all()
    for row in rows:
        assert row.deadline_at is not None
        row.deadline_at = row.deadline_at + by
    return len(rows)
