"""The waiting line: which queued jobs may be sent now (a backlog is the unit of work).

Queues are first in, first out. Were all 5,000 jobs of a backlog sent at once, every job's
first step would run before any job's second, and each job's latency limit (its deadline opens
at its first step) would be spent waiting behind the whole backlog: most would end out of
budget. So at most ``window`` jobs are *open* (sent and not ended); the rest wait unsent, their
budget and deadline not yet open, and each ending lets the next in line go.

:func:`claim_next` is the one place that decides it. It runs after a submission, after a job
ends, after a cancel, and on the supervisor's sweep; whoever calls it sends the route step of
each job it returns, after the claim commits. A claim whose sends were lost (the process died
in between) holds its place until ``resend_after`` has passed; then its jobs, still ``queued``
and never started, are claimed again. A route step sent twice is harmless: the flow's steps are
idempotent, as they are for a broker's redelivery.

Which waiting jobs take the free places is not first come, first served: the places are shared
across tenants and their batches, interactive jobs first, by
:func:`ragq.orchestration.fair_share.claim_order`; this module only loads the line's state for
it and marks what it chose (docs/fair-share.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, exists, func, or_, select, text, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from ragq.ledger.db import session_scope
from ragq.ledger.models import TERMINAL_JOB_STATUSES, JobRow, JobStatus, utcnow
from ragq.ledger.tenants import tenant_shares
from ragq.orchestration.fair_share import Claimed, LineState, WaitingJob, claim_order
from ragq.schemas.ticket import Priority

__all__ = ["Claimed", "WaitingLine", "claim_due", "claim_next", "has_waiting", "jobs_by_tenant",
           "open_job_count", "waiting_job_count"]

_OPEN = [s for s in JobStatus if s not in TERMINAL_JOB_STATUSES]
_LINE_ORDER = (JobRow.created_at, JobRow.position, JobRow.id)  # a batch's in its line order
_LOCK_KEY = 0x72616771  # "ragq": serialises claims on PostgreSQL (SQLite's BEGIN IMMEDIATE does)


@dataclass(frozen=True)
class WaitingLine:
    """``window``: how many jobs may be open at once (None: no limit); ``resend_after``: when a
    claimed job that never started was lost on its way to the queue."""

    window: int | None
    resend_after: timedelta
    reserve: int = 0
    """Places past the window that only interactive jobs may take (docs/fair-share.md)."""


def open_job_count(session: Session) -> int:
    """Jobs sent and not ended: the ones holding a place in the window."""
    return int(session.scalar(
        select(func.count()).select_from(JobRow)
        .where(JobRow.status.in_(_OPEN), JobRow.dispatched_at.is_not(None))) or 0)


def waiting_job_count(session: Session) -> int:
    """Jobs queued and not sent yet: the backlog behind the window."""
    return int(session.scalar(
        select(func.count()).select_from(JobRow)
        .where(JobRow.status == JobStatus.QUEUED, JobRow.dispatched_at.is_(None))) or 0)


def jobs_by_tenant(session: Session) -> dict[str, tuple[int, int]]:
    """(open, waiting) jobs per tenant that has either: who holds the window, who waits."""
    rows = session.execute(
        select(JobRow.tenant, JobRow.dispatched_at.is_not(None), func.count())
        .where(or_(and_(JobRow.status.in_(_OPEN), JobRow.dispatched_at.is_not(None)),
                   and_(JobRow.status == JobStatus.QUEUED, JobRow.dispatched_at.is_(None))))
        .group_by(JobRow.tenant, JobRow.dispatched_at.is_not(None)))
    counts: dict[str, tuple[int, int]] = {}
    for tenant, sent, n in rows:
        open_, waiting = counts.get(tenant, (0, 0))
        counts[tenant] = (open_ + n, waiting) if sent else (open_, waiting + n)
    return dict(sorted(counts.items()))


def claim_due(bind: Engine | sessionmaker[Session], line: WaitingLine) -> list[Claimed]:
    """:func:`claim_next` in its own transaction, after a read that finds anything to claim at
    all: most endings have no backlog behind them, and a read takes no write lock (SQLite has
    one for the whole ledger)."""
    with session_scope(bind, readonly=True) as session:
        if not has_waiting(session, line):
            return []
    with session_scope(bind) as session:
        return claim_next(session, line)


def has_waiting(session: Session, line: WaitingLine, *, now: datetime | None = None) -> bool:
    """True when a job waits unsent, or was sent and lost (see :func:`claim_next`)."""
    before = (now or utcnow()) - line.resend_after
    lost = and_(JobRow.dispatched_at < before, JobRow.started_at.is_(None))
    return bool(session.scalar(select(
        exists().where(JobRow.status == JobStatus.QUEUED,
                       or_(JobRow.dispatched_at.is_(None), lost)))))


def claim_next(session: Session, line: WaitingLine, *, now: datetime | None = None
               ) -> list[Claimed]:
    """Mark the jobs to send now as sent; returns them, lost sends first, then the waiting jobs
    the window has room for (all of them when it has no limit), chosen by fair share."""
    session.connection()  # SQLite: BEGIN IMMEDIATE, the write lock, taken here
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    now = now or utcnow()  # once the lock is held: no earlier than the ending that made room
    lost = _lost_sends(session, now - line.resend_after)
    open_ = _open_jobs(session)
    total = sum(open_.values())
    room = None if line.window is None else max(0, line.window - total)
    reserve = 0 if line.window is None else max(0, min(line.reserve,
                                                       line.window + line.reserve - total))
    waiting: list[Claimed] = []
    if room != 0 or reserve:
        state = _line_state(session, room, reserve, open_)
        priority = {job.job_id: job.priority for job in state.waiting}
        waiting = [Claimed(id_, priority[id_]) for id_ in claim_order(state)]
    claimed = [*lost, *waiting]
    if claimed:
        session.execute(update(JobRow).where(JobRow.id.in_([c.job_id for c in claimed]))
                        .values(dispatched_at=now))
    return claimed


def _lost_sends(session: Session, before: datetime) -> list[Claimed]:
    """Jobs sent before ``before`` that never started: their route step was lost."""
    return [Claimed(id_, Priority(priority)) for id_, priority in session.execute(
        select(JobRow.id, JobRow.priority).where(JobRow.status == JobStatus.QUEUED,
                                                 JobRow.dispatched_at < before,
                                                 JobRow.started_at.is_(None))
        .order_by(*_LINE_ORDER))]


def _open_jobs(session: Session) -> dict[tuple[str, str | None], int]:
    """Open jobs (the ones holding a place in the window) per tenant and batch."""
    rows = session.execute(
        select(JobRow.tenant, JobRow.batch_id, func.count())
        .where(JobRow.status.in_(_OPEN), JobRow.dispatched_at.is_not(None))
        .group_by(JobRow.tenant, JobRow.batch_id))
    return {(tenant, batch_id): int(n) for tenant, batch_id, n in rows}


def _line_state(session: Session, room: int | None, reserve: int,
                open_: dict[tuple[str, str | None], int]) -> LineState:
    """What the fair share decides on: the waiting jobs (of each lane, a tenant's batch and
    priority, only the ``room`` + ``reserve`` oldest, as no more of them can go now), the
    ``open_`` jobs per tenant and batch, and the tenants' shares. One read of the lanes, then
    one per lane, each an ordered range of ``ix_jobs_waiting_line``: a claim reads about
    ``room`` rows per lane whatever the backlog behind them."""
    lanes = session.execute(select(JobRow.tenant, JobRow.batch_id, JobRow.priority)
                            .where(JobRow.status == JobStatus.QUEUED).distinct()).all()
    heads: list[tuple[datetime, int, str, WaitingJob]] = []
    for tenant, batch_id, priority in lanes:
        query = (select(*_LINE_ORDER).where(
            JobRow.status == JobStatus.QUEUED, JobRow.tenant == tenant,
            JobRow.batch_id.is_(None) if batch_id is None else JobRow.batch_id == batch_id,
            JobRow.priority == priority, JobRow.dispatched_at.is_(None))
            .order_by(*_LINE_ORDER).limit(None if room is None else room + reserve))
        heads += [(created, -1 if position is None else position, id_,
                   WaitingJob(id_, tenant, batch_id, Priority(priority)))
                  for created, position, id_ in session.execute(query)]
    return LineState([head[3] for head in sorted(heads, key=lambda h: h[:3])], open_,
                     tenant_shares(session), room, reserve)
