"""Batches in the ledger follow the status machine of ``orchestration.batches``: the ledger
writes its decisions, stamps ``finished_at`` once and records the batch's webhook event once."""

from __future__ import annotations

from sqlalchemy import Engine

from ragq.ledger import (
    add_job,
    cancel_batch,
    create_batch,
    first_attempts,
    get_batch,
    record_input_error,
    session_scope,
    start_batch,
)
from ragq.ledger.jobs import finish_job
from ragq.schemas.statuses import BatchStatus, JobStatus

HOOK = "https://hooks.example/ragq"


def new_batch(engine: Engine, jobs: int, *, invalid: int = 0) -> tuple[str, list[str]]:
    with session_scope(engine) as session:
        batch = create_batch(session, tenant="t", collection="c", input_filename=None,
                             webhook_url=HOOK)
        ids = [add_job(session, batch_id=batch.id, custom_id=f"c{i}", position=i + 1,
                       tenant="t", collection="c", question="q?", acl=["public"]).id
               for i in range(jobs)]
        for line in range(invalid):
            record_input_error(session, batch_id=batch.id, line=jobs + line + 1, custom_id=None,
                               code="invalid_json", message="not JSON")
        start_batch(session, batch_id=batch.id)
        return batch.id, ids


def finish(engine: Engine, job_id: str, status: JobStatus = JobStatus.COMPLETED) -> bool:
    with session_scope(engine) as session:
        return finish_job(session, job_id=job_id, status=status, result={"status": str(status)})


def batch_state(engine: Engine, batch_id: str) -> tuple[BatchStatus, bool, list[str]]:
    """(status, finished_at is set, pending batch events)."""
    with session_scope(engine, readonly=True) as session:
        batch = get_batch(session, batch_id=batch_id)
        events = first_attempts(session, batch_id=batch_id)
        return BatchStatus(batch.status), batch.finished_at is not None, events


def test_an_empty_batch_ends_completed_when_it_starts(engine: Engine):
    batch_id, _ = new_batch(engine, 0, invalid=2)
    status, finished, events = batch_state(engine, batch_id)
    assert (status, finished, len(events)) == (BatchStatus.COMPLETED, True, 1)
    with session_scope(engine, readonly=True) as session:
        batch = get_batch(session, batch_id=batch_id)
        assert batch.finished_at == batch.started_at and batch.invalid_count == 2


def test_the_last_job_to_end_completes_the_batch_and_records_its_event_once(engine: Engine):
    batch_id, jobs = new_batch(engine, 3)
    assert batch_state(engine, batch_id) == (BatchStatus.IN_PROGRESS, False, [])
    finish(engine, jobs[0])
    finish(engine, jobs[1], JobStatus.FAILED)
    assert batch_state(engine, batch_id) == (BatchStatus.IN_PROGRESS, False, [])
    assert finish(engine, jobs[2], JobStatus.BUDGET_EXHAUSTED)
    assert not finish(engine, jobs[2])  # a redelivered finalize changes nothing
    status, finished, events = batch_state(engine, batch_id)
    assert (status, finished, len(events)) == (BatchStatus.COMPLETED, True, 1)
    with session_scope(engine, readonly=True) as session:
        batch = get_batch(session, batch_id=batch_id)
        assert (batch.completed_count, batch.failed_count, batch.budget_exhausted_count) \
            == (1, 1, 1)


def test_a_cancel_stops_open_jobs_keeps_finished_ones_and_ends_the_batch_once(engine: Engine):
    batch_id, jobs = new_batch(engine, 3)
    finish(engine, jobs[0])
    with session_scope(engine) as session:
        assert cancel_batch(session, batch_id=batch_id) == 2
    status, finished, events = batch_state(engine, batch_id)
    assert (status, finished, len(events)) == (BatchStatus.CANCELLED, True, 1)
    with session_scope(engine) as session:
        assert cancel_batch(session, batch_id=batch_id) == 0
        batch = get_batch(session, batch_id=batch_id)
        assert (batch.completed_count, batch.cancelled_count) == (1, 2)
    assert batch_state(engine, batch_id) == (status, finished, events)


def test_cancelling_a_completed_batch_leaves_it_completed(engine: Engine):
    batch_id, jobs = new_batch(engine, 1)
    finish(engine, jobs[0])
    with session_scope(engine) as session:
        assert cancel_batch(session, batch_id=batch_id) == 0
    status, _, events = batch_state(engine, batch_id)
    assert status is BatchStatus.COMPLETED and len(events) == 1
