"""The deadline rule under crashes: an outage the supervisor recorded moves the
deadline of every open job, so a charge the crash would have refused for ``latency_ms`` is
granted, while jobs that ended keep theirs. SQLite, and PostgreSQL when offered."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import Engine

from ragq.ledger import JobRow, extend_open_deadlines, session_scope
from ragq.ledger.budgets import charge_many, create_job_budget, get_job_budget
from ragq.ledger.models.base import utcnow
from ragq.schemas.statuses import BudgetDimension, JobStatus


def _job(engine: Engine, *, deadline_in_s: float | None,
         status: JobStatus = JobStatus.RETRIEVING) -> str:
    with session_scope(engine) as session:
        job = JobRow(tenant="t", collection="c", question="q", status=status)
        session.add(job)
        session.flush()
        deadline = None if deadline_in_s is None else utcnow() + timedelta(seconds=deadline_in_s)
        create_job_budget(session, job_id=job.id, limits={"steps": 10}, profile="test",
                          deadline_at=deadline)
        return job.id


def _deadline(engine: Engine, job_id: str) -> object:
    with session_scope(engine, readonly=True) as session:
        budget = get_job_budget(session, job_id=job_id)
        assert budget is not None
        return budget.deadline_at


def test_an_outage_moves_open_deadlines_so_the_crash_spends_no_latency(engine: Engine) -> None:
    job = _job(engine, deadline_in_s=10)
    later = utcnow() + timedelta(seconds=30)  # a step retried after a 30 s outage
    with session_scope(engine) as session:
        refused = charge_many(session, job_id=job, amounts={"steps": 1},
                              idempotency_key="before", now=later)
    assert refused.refused == BudgetDimension.LATENCY_MS
    with session_scope(engine) as session:
        assert extend_open_deadlines(session, by=timedelta(seconds=40)) == 1
    with session_scope(engine) as session:
        granted = charge_many(session, job_id=job, amounts={"steps": 1},
                              idempotency_key="after", now=later)
    assert granted.granted


def test_ended_jobs_and_jobs_without_a_deadline_keep_theirs(engine: Engine) -> None:
    ended = _job(engine, deadline_in_s=10, status=JobStatus.COMPLETED)
    unlimited = _job(engine, deadline_in_s=None)
    open_job = _job(engine, deadline_in_s=10)
    before = {j: _deadline(engine, j) for j in (ended, unlimited, open_job)}
    with session_scope(engine) as session:
        assert extend_open_deadlines(session, by=timedelta(seconds=5)) == 1
    assert _deadline(engine, ended) == before[ended]
    assert _deadline(engine, unlimited) is None
    assert _deadline(engine, open_job) == before[open_job] + timedelta(seconds=5)  # type: ignore[operator]


def test_an_outage_never_gives_time_back(engine: Engine) -> None:
    with session_scope(engine) as session, pytest.raises(ValueError, match="positive"):
        extend_open_deadlines(session, by=timedelta(seconds=-1))
