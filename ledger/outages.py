"""Time lost to a crashed process is not the jobs' to pay (SPEC C23).

A job's latency limit is a deadline from its start (``job_budgets.deadline_at``). When the
resident supervisor has replaced a dead process it knows how long the outage lasted — from the
last moment the process (or the oldest step it held) was known good to the moment its
replacement was ready — and moves every open job's deadline by that much.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragq.ledger.models import JobBudgetRow, JobRow
from ragq.schemas.statuses import TERMINAL_JOB_STATUSES

__all__ = ["extend_open_deadlines"]


def extend_open_deadlines(session: Session, *, by: timedelta) -> int:
    """Move the deadline of every job that has not ended by ``by``; returns how many moved.

    Jobs that ended keep theirs; jobs without a deadline (no latency limit) are left alone.
    Raises ValueError for a negative ``by``: an outage never gives time back.
    """
    if by < timedelta(0):
        raise ValueError(f"an outage lasts a positive time, got {by}")
    open_jobs = select(JobRow.id).where(JobRow.status.not_in(list(TERMINAL_JOB_STATUSES)))
    rows = session.scalars(
        select(JobBudgetRow).where(JobBudgetRow.deadline_at.is_not(None),
                                   JobBudgetRow.job_id.in_(open_jobs))
        .with_for_update()).all()
    for row in rows:
        assert row.deadline_at is not None
        row.deadline_at = row.deadline_at + by
    return len(rows)
