"""Open jobs that nothing carries on any more, and the message that resumes each.

Every step that hands its job on (a job-level step, or a layer's chord) records that message on
the job (``jobs.next_step``) in the transaction it commits, and sends it after. When the message
is lost — a broker killed between a layer's last reply and its chord body, a worker killed
between commit and send — no step of the job would ever run again. Such a job is *idle*: open,
started, no charge (every step pays one) for longer than the idle time, and not resumed within
that time either. Whether anything still holds or queues a message of it is the broker's to
say (:mod:`ragq.workers.stalls`); an idle job nothing holds is resumed by sending its recorded
message again. Steps are idempotent, so a message that turns out to exist after all costs
repeated work, never double writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from ragq.ledger.models import BudgetChargeRow, JobRow, SubQueryRow, utcnow
from ragq.orchestration.flow import Enqueue, EnqueueLayer
from ragq.schemas.statuses import JobStatus, SubQueryStatus
from ragq.schemas.tasks import Task
from ragq.schemas.ticket import Priority

#: A job in one of these is under way: started, not ended.
UNDER_WAY = (JobStatus.ROUTING, JobStatus.PLANNING, JobStatus.RETRIEVING,
             JobStatus.VERIFYING, JobStatus.SYNTHESIZING)

#: The jobs a sweep looks at: under way, or sent from the waiting line (its route step) and
#: not started. The waiting line sends a lost route step again itself, but only after the
#: broker's redelivery time (11 minutes by default), since until then a queued route step may
#: legitimately be waiting; the sweep, which can ask the broker, need not wait that long.
_OPEN_AND_SENT = or_(JobRow.status.in_(UNDER_WAY),
                     and_(JobRow.status == JobStatus.QUEUED, JobRow.dispatched_at.is_not(None)))

Step = Enqueue | EnqueueLayer

#: A sub-query in one of these has ended: its pipeline will send nothing more.
SUB_QUERY_ENDED = (SubQueryStatus.SUFFICIENT, SubQueryStatus.INSUFFICIENT, SubQueryStatus.FAILED,
                   SubQueryStatus.SKIPPED)


def step_json(step: Step) -> dict[str, Any]:
    """How a job's next step is kept in the ledger."""
    if isinstance(step, EnqueueLayer):
        return {"layer": {"round": step.round, "layer": step.layer,
                          "indexes": list(step.indexes)}}
    return {"task": str(step.task), "args": list(step.args)}


def step_of(data: dict[str, Any]) -> Step:
    """The step :func:`step_json` kept. Raises KeyError or ValueError for anything else."""
    if "layer" in data:
        layer = data["layer"]
        return EnqueueLayer(int(layer["round"]), int(layer["layer"]),
                            tuple(int(i) for i in layer["indexes"]))
    return Enqueue(str(data["task"]), tuple(data["args"]))


@dataclass(frozen=True)
class IdleJob:
    """An open job nothing has moved for ``idle_s`` seconds, and the message it was last
    handed on with."""

    job_id: str
    step: Step
    idle_s: float
    again: bool = False
    """The sweep's own resumption is the last thing that moved it: the step sent then did not
    move the job, so this is the same stall, not a new outage (its deadline moved already)."""
    priority: Priority = Priority.BULK
    """The job's priority: its message is sent again with the broker priority it gives."""


def idle_jobs(session: Session, *, idle_s: float, now: datetime | None = None
              ) -> list[IdleJob]:
    """The jobs under way (or sent and not started) with no charge, start, sending or
    resumption in the last ``idle_s`` seconds, oldest activity first. A job with no recorded
    next step has not finished its route step (resumed from it), or was handed on before next
    steps were kept (left alone)."""
    now = now or utcnow()
    cutoff = now - timedelta(seconds=idle_s)
    jobs = session.execute(
        select(JobRow.id, JobRow.status, JobRow.next_step, JobRow.started_at,
               JobRow.dispatched_at, JobRow.resumed_at, JobRow.priority)
        .where(_OPEN_AND_SENT,
               (JobRow.resumed_at.is_(None)) | (JobRow.resumed_at < cutoff))).all()
    from_route = (JobStatus.QUEUED, JobStatus.ROUTING)
    jobs = [j for j in jobs if j.next_step or j.status in from_route]
    if not jobs:
        return []
    charged = dict(session.execute(
        select(BudgetChargeRow.job_id, func.max(BudgetChargeRow.created_at))
        .where(BudgetChargeRow.job_id.in_([j.id for j in jobs]))
        .group_by(BudgetChargeRow.job_id)).all())
    idle: list[IdleJob] = []
    for job in jobs:
        moved = [t for t in (charged.get(job.id), job.started_at, job.dispatched_at,
                             job.resumed_at) if t is not None]
        last = max(moved) if moved else None
        if last is None or last < cutoff:
            since = (now - last).total_seconds() if last else float("inf")
            step = step_of(job.next_step) if job.next_step else Enqueue(Task.ROUTE, ())
            again = job.resumed_at is not None and last == job.resumed_at
            idle.append(IdleJob(job.id, step, since, again, Priority(job.priority)))
    return sorted(idle, key=lambda j: -j.idle_s)


def mark_resumed(session: Session, job_ids: Sequence[str], *, now: datetime | None = None
                 ) -> list[str]:
    """Stamp the jobs still open among ``job_ids`` as resumed now (so the next sweeps leave
    them alone for the idle time); returns those ids."""
    if not job_ids:
        return []
    rows = session.execute(
        update(JobRow).where(JobRow.id.in_(list(job_ids)), _OPEN_AND_SENT)
        .values(resumed_at=now or utcnow()).returning(JobRow.id)).all()
    return [r.id for r in rows]


def record_next_step(session: Session, job_id: str, step: Step) -> None:
    session.connection().execute(update(JobRow).where(JobRow.id == job_id)
                                 .values(next_step=step_json(step)))


def ended_sub_queries(session: Session, job_id: str, round_: int) -> set[int]:
    """Indexes of the sub-queries of ``job_id``'s round ``round_`` that have ended: a layer
    whose every sub-query is among them waits only for its join (``after_layer``)."""
    return set(session.scalars(
        select(SubQueryRow.index).where(SubQueryRow.job_id == job_id,
                                        SubQueryRow.round == round_,
                                        SubQueryRow.status.in_(SUB_QUERY_ENDED))))
