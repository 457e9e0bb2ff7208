"""Webhook events and attempts against a real SQLite ledger and a loopback receiver (no broker):
one event per ending, retries recorded, 410 disables, URLs checked again at delivery time."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from ragq.ledger import (
    add_job,
    cancel_batch,
    create_batch,
    ensure_endpoint,
    first_attempts,
    make_engine,
    session_scope,
    start_batch,
)
from ragq.ledger.jobs import finish_job
from ragq.ledger.models import WebhookDeliveryRow, WebhookEndpointRow, utcnow
from ragq.orchestration.webhook_retry import NextStep
from ragq.schemas.statuses import JobStatus
from ragq.settings import build_settings
from ragq.tasks.webhooks import deliver
from ragq.webhooks import HttpxWebhookSender, new_secret, verify_signature
from tests.fakes.http import Reply
from tests.ledger_template import migrated


@pytest.fixture
def engine(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    migrated(url)
    return make_engine(url)


@pytest.fixture
def cfg(tmp_path):
    return build_settings(home=tmp_path, webhook_allow_private=True, webhook_max_attempts=3,
                          webhook_backoff_base_s=0.01, public_url="https://ragq.example")


def batch_with_jobs(engine, url: str, n: int = 2, job_webhook: bool = False):
    with session_scope(engine) as session:
        secret = ensure_endpoint(session, tenant="t", url=url, new_secret=new_secret).secret
        batch = create_batch(session, tenant="t", collection="c", input_filename=None,
                             webhook_url=url, webhook_secret=secret)
        jobs = [add_job(session, batch_id=batch.id, custom_id=f"c{i}", position=i + 1,
                        tenant="t", collection="c", question="q", acl=["public"],
                        metadata={"webhook_url": url} if job_webhook else {}).id
                for i in range(n)]
        start_batch(session, batch_id=batch.id)
        return batch.id, jobs, secret


def finish(engine, job_id: str) -> bool:
    with session_scope(engine) as session:
        return finish_job(session, job_id=job_id, status=JobStatus.COMPLETED, result={})


def pending(engine, jobs, batch_id):
    with session_scope(engine) as session:
        return first_attempts(session, job_ids=jobs, batch_id=batch_id)


def attempts(engine, webhook_id: str):
    with session_scope(engine) as session:
        return session.scalars(select(WebhookDeliveryRow).where(
            WebhookDeliveryRow.webhook_id == webhook_id).order_by(WebhookDeliveryRow.attempt)
        ).all()


def test_each_ending_records_one_event_even_when_finished_twice(engine, loopback):
    batch_id, jobs, _ = batch_with_jobs(engine, f"{loopback.base_url}/hook", job_webhook=True)
    assert finish(engine, jobs[0]) and not finish(engine, jobs[0])  # redelivered finalize
    assert len(pending(engine, jobs, batch_id)) == 1  # job event; batch still running
    finish(engine, jobs[1])
    events = pending(engine, jobs, batch_id)
    assert len(events) == 3 and len(set(events)) == 3  # two job events + the batch event


def test_a_delivery_is_signed_retried_and_recorded_with_one_webhook_id(engine, cfg, loopback):
    loopback.route("POST", "/hook", lambda r: Reply(200, {}))
    loopback.fail_next(Reply(500, {}), times=2)
    batch_id, jobs, secret = batch_with_jobs(engine, f"{loopback.base_url}/hook", n=1)
    finish(engine, jobs[0])
    (webhook_id,) = pending(engine, [], batch_id)
    sender = HttpxWebhookSender(timeout_s=5)
    steps = [deliver(engine, sender, cfg, webhook_id=webhook_id, attempt=a) for a in (1, 2, 3)]
    assert [s.step for s in steps] == [NextStep.RETRY, NextStep.RETRY, NextStep.DELIVERED]
    assert deliver(engine, sender, cfg, webhook_id=webhook_id, attempt=3) is None  # claimed
    rows = attempts(engine, webhook_id)
    assert [(r.attempt, r.status_code) for r in rows] == [(1, 500), (2, 500), (3, 200)]
    assert {r.headers["webhook-id"] for r in loopback.requests} == {webhook_id}
    assert len({r.body for r in loopback.requests}) == 1  # the same body every time
    last = loopback.requests[-1]
    verify_signature(secret, msg_id=webhook_id, timestamp=last.headers["webhook-timestamp"],
                     body=last.body, signature=last.headers["webhook-signature"])
    body = json.loads(last.body)
    assert body["type"] == "batch.completed" and body["data"]["batch_id"] == batch_id
    assert body["data"]["results_url"] == f"https://ragq.example/v1/batches/{batch_id}/results"


def test_a_410_disables_the_endpoint_and_later_events_are_not_sent(engine, cfg, loopback):
    loopback.route("POST", "/hook", lambda r: Reply(410, {}))
    url = f"{loopback.base_url}/hook"
    batch_id, jobs, _ = batch_with_jobs(engine, url, n=2, job_webhook=True)
    finish(engine, jobs[0])
    (first,) = pending(engine, jobs, batch_id)
    sender = HttpxWebhookSender(timeout_s=5)
    assert deliver(engine, sender, cfg, webhook_id=first, attempt=1).step is NextStep.DISABLE
    with session_scope(engine) as session:
        endpoint = session.scalars(select(WebhookEndpointRow)).one()
        assert endpoint.disabled_at is not None and "410" in endpoint.disabled_reason
    finish(engine, jobs[1])
    for webhook_id in pending(engine, jobs, batch_id):
        assert deliver(engine, sender, cfg, webhook_id=webhook_id, attempt=1).step \
            is NextStep.GIVE_UP
    assert loopback.count("POST") == 1
    assert "disabled" in attempts(engine, webhook_id)[0].error


def test_urls_are_checked_again_at_delivery_time(engine, cfg, loopback):
    batch_id, _, _ = batch_with_jobs(engine, f"{loopback.base_url}/hook", n=1)
    with session_scope(engine) as session:
        cancel_batch(session, batch_id=batch_id)
    (webhook_id,) = pending(engine, [], batch_id)
    strict = cfg.model_copy(update={"webhook_allow_private": False})
    result = deliver(engine, HttpxWebhookSender(timeout_s=5), strict, webhook_id=webhook_id,
                     attempt=1)
    assert result.step is NextStep.GIVE_UP and loopback.count() == 0
    assert "loopback" in attempts(engine, webhook_id)[0].error


def test_an_attempt_whose_sender_died_is_taken_over_after_its_lease(engine, cfg, loopback):
    from ragq.ledger import claim_delivery

    loopback.route("POST", "/hook", lambda r: Reply(200, {}))
    batch_id, jobs, _ = batch_with_jobs(engine, f"{loopback.base_url}/hook", n=1)
    finish(engine, jobs[0])
    (webhook_id,) = pending(engine, [], batch_id)
    with session_scope(engine) as session:  # a sender claims the attempt, then its worker dies
        assert claim_delivery(session, webhook_id=webhook_id, attempt=1, lease_s=3600)
    sender = HttpxWebhookSender(timeout_s=5)
    assert deliver(engine, sender, cfg, webhook_id=webhook_id, attempt=1) is None  # leased
    with session_scope(engine) as session:  # the lease runs out
        session.execute(update(WebhookDeliveryRow).values(next_attempt_at=utcnow()
                                                          - timedelta(seconds=1)))
    step = deliver(engine, sender, cfg, webhook_id=webhook_id, attempt=1)
    assert step is not None and step.step is NextStep.DELIVERED
    assert [(r.attempt, r.status_code) for r in attempts(engine, webhook_id)] == [(1, 200)]
    assert len(loopback.requests) == 1


def test_review_events_go_signed_to_the_batch_webhook(engine, cfg, loopback):
    """A batch ticket without a webhook of its own: its job.needs_review and job.reviewed go to
    the batch's URL, signed with the batch endpoint's secret."""
    from ragq.errors import WebhookSignatureError
    from ragq.ledger import Resolution, resolve_review
    from ragq.ledger.reviews import queue_review
    from ragq.schemas.statuses import ReviewDecision

    loopback.route("POST", "/hook", lambda r: Reply(204, b""))
    batch_id, jobs, secret = batch_with_jobs(engine, f"{loopback.base_url}/hook", n=1)
    with session_scope(engine) as session:
        finish_job(session, job_id=jobs[0], status=JobStatus.NEEDS_REVIEW,
                   result={"status": "needs_review", "answer": "draft"})
        queue_review(session, job_id=jobs[0], tenant="t", reasons=["low_confidence"],
                     outcome=JobStatus.COMPLETED)
    with session_scope(engine) as session:
        resolve_review(session, job_id=jobs[0], resolution=Resolution(
            ReviewDecision.REJECTED, "key_1", note="wrong product"))
    sender = HttpxWebhookSender(timeout_s=5)
    for webhook_id in pending(engine, jobs, batch_id):
        assert deliver(engine, sender, cfg, webhook_id=webhook_id, attempt=1).step \
            is NextStep.DELIVERED
    received = {}
    for request in loopback.requests:
        verify_signature(secret, msg_id=request.headers["webhook-id"],
                         timestamp=request.headers["webhook-timestamp"], body=request.body,
                         signature=request.headers["webhook-signature"])
        body = json.loads(request.body)
        received[body["type"]] = body["data"]
    assert set(received) == {"job.needs_review", "job.reviewed", "batch.completed"}
    assert received["job.needs_review"]["status"] == "needs_review"
    assert received["job.reviewed"]["status"] == "rejected"
    # the batch ended with the job's entry in the queue: its counts say so
    assert received["batch.completed"]["counts"]["needs_review"] == 1
    tampered = next(r for r in loopback.requests if b"job.needs_review" in r.body)
    with pytest.raises(WebhookSignatureError):
        verify_signature(secret, msg_id=tampered.headers["webhook-id"],
                         timestamp=tampered.headers["webhook-timestamp"],
                         body=tampered.body.replace(b"needs_review", b"completed___"),
                         signature=tampered.headers["webhook-signature"])
