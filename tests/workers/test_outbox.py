"""The webhook outbox against a real SQLite ledger and an in-process broker: only ended
entities' unsent first attempts go out, as attempt 1 of the delivery task on bookkeeping."""

from __future__ import annotations

from sqlalchemy import Engine

from ragq.ledger import (
    add_job,
    claim_delivery,
    create_batch,
    ensure_endpoint,
    record_attempt,
    session_scope,
    start_batch,
)
from ragq.ledger.jobs import finish_job
from ragq.schemas.statuses import JobStatus
from ragq.schemas.tasks import Queue, Task
from ragq.settings import Settings
from ragq.webhooks import new_secret
from ragq.workers.client import client_app
from ragq.workers.outbox import send_pending_webhooks
from ragq.workers.resources import resources_for
from tests.fakes.broker import drain

HOOK = "http://127.0.0.1:9/hook"  # never called: no worker consumes the in-process queue


def batch_of_two(engine: Engine) -> tuple[str, list[str]]:
    with session_scope(engine) as session:
        ensure_endpoint(session, tenant="t", url=HOOK, new_secret=new_secret)
        batch = create_batch(session, tenant="t", collection="c", input_filename=None,
                             webhook_url=HOOK)
        jobs = [add_job(session, batch_id=batch.id, custom_id=f"c{i}", position=i + 1,
                        tenant="t", collection="c", question="q?", acl=["public"],
                        metadata={"webhook_url": HOOK}).id for i in range(2)]
        start_batch(session, batch_id=batch.id)
        return batch.id, jobs


def finish(engine: Engine, job_id: str) -> None:
    with session_scope(engine) as session:
        finish_job(session, job_id=job_id, status=JobStatus.COMPLETED, result={})


def test_only_ended_entities_events_are_sent_as_first_attempts(memory_broker: Settings):
    app, engine = client_app(memory_broker), resources_for(memory_broker).engine
    batch_id, jobs = batch_of_two(engine)
    assert send_pending_webhooks(app, engine, job_ids=jobs, batch_id=batch_id) == 0
    finish(engine, jobs[0])
    assert send_pending_webhooks(app, engine, job_ids=jobs, batch_id=batch_id) == 1
    (first,) = drain(memory_broker, Queue.BOOKKEEPING)
    assert first[0] == Task.DELIVER_WEBHOOK and first[1][0].startswith("msg_")
    assert first[1][1] == 1
    finish(engine, jobs[1])
    assert send_pending_webhooks(app, engine, job_ids=jobs, batch_id=batch_id) == 3
    sent = drain(memory_broker, Queue.BOOKKEEPING)
    assert len({args[0] for _, args in sent}) == 3  # two job events and the batch event
    assert send_pending_webhooks(app, engine, batch_id=batch_id) == 1  # just the batch's


def test_an_attempted_event_is_no_longer_pending(memory_broker: Settings):
    app, engine = client_app(memory_broker), resources_for(memory_broker).engine
    batch_id, jobs = batch_of_two(engine)
    finish(engine, jobs[0])
    send_pending_webhooks(app, engine, job_ids=jobs[:1])
    ((_, (webhook_id, _)),) = drain(memory_broker, Queue.BOOKKEEPING)
    with session_scope(engine) as session:  # what the delivery task does with it
        assert claim_delivery(session, webhook_id=webhook_id, attempt=1)
        record_attempt(session, webhook_id=webhook_id, attempt=1, status_code=200, error=None)
    assert send_pending_webhooks(app, engine, job_ids=jobs[:1], batch_id=batch_id) == 0
    assert drain(memory_broker, Queue.BOOKKEEPING) == []


def test_nothing_named_reads_nothing_and_sends_nothing(memory_broker: Settings):
    app, engine = client_app(memory_broker), resources_for(memory_broker).engine
    assert send_pending_webhooks(app, engine) == 0
    assert drain(memory_broker, Queue.BOOKKEEPING) == []
