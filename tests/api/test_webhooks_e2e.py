"""Batches and jobs submitted over HTTP to the real stack fire signed webhooks at a real
receiver: one logical delivery per event, retried through 500s with one webhook-id."""

from __future__ import annotations

import json

import httpx
from sqlalchemy import or_, select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import WebhookDeliveryRow
from ragq.ledger.webhooks import SENDING
from ragq.webhooks import verify_signature
from ragq.workers.wiring import build_ledger_engine
from tests.api.conftest import auth, wait_batch, wait_until
from tests.fakes.http import LoopbackServer, Reply
from tests.tasks.test_flow import BRIDGE_DOCS, write_jsonl


def verified(request, secret: str) -> dict:
    verify_signature(secret, msg_id=request.headers["webhook-id"],
                     timestamp=request.headers["webhook-timestamp"], body=request.body,
                     signature=request.headers["webhook-signature"])
    return json.loads(request.body)


def settled_deliveries(settings, batch_id: str, job_id: str) -> bool:
    """True when the batch and the job each have an event and every attempt of theirs has
    been answered (or has failed): none is due or being sent."""
    with session_scope(build_ledger_engine(settings)) as session:
        rows = session.scalars(select(WebhookDeliveryRow).where(or_(
            WebhookDeliveryRow.batch_id == batch_id, WebhookDeliveryRow.job_id == job_id))).all()
    answered = [r.status_code is not None or (r.error is not None and r.error != SENDING)
                for r in rows]
    return (any(r.job_id == job_id for r in rows) and any(r.job_id is None for r in rows)
            and all(answered))


def test_a_batch_webhook_survives_two_500s_and_a_job_webhook_arrives_once(
        stack, api, make_key, collection, tmp_path):
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    key = make_key("acme")
    with LoopbackServer() as receiver:
        receiver.route("POST", "/batch", lambda r: Reply(200, {}))
        receiver.route("POST", "/job", lambda r: Reply(204, b""))
        receiver.fail_next(Reply(500, {"error": "down"}), path="/batch", times=2)
        created = httpx.post(f"{api}/v1/batches", headers=auth(key), json={
            "collection": collection, "webhook_url": f"{receiver.base_url}/batch",
            "tickets": [{"custom_id": "a", "question": "Who founded Orion Labs?"},
                        {"custom_id": "b", "question": "Who makes the Nimbus drone?"}]})
        assert created.status_code == 201, created.text
        batch = created.json()
        assert batch["id"].startswith("bat_") and batch["webhook_secret"].startswith("whsec_")
        job = httpx.post(f"{api}/v1/jobs", headers=auth(key), json={
            "question": "Who founded Orion Labs?", "collection": collection,
            "webhook_url": f"{receiver.base_url}/job"})
        assert job.status_code == 201, job.text
        assert wait_batch(api, key, batch["id"])["status"] == "completed"
        # Every event is a ledger row, written when its job or batch ended, and a retry is a
        # row too, written with the answer to the attempt before it: once every row of the
        # batch and the job holds its answer, each attempt has reached the receiver and none
        # is left to come, so a duplicate event or a fourth attempt would be counted below.
        wait_until(lambda: settled_deliveries(stack.settings, batch["id"], job.json()["id"]),
                   timeout_s=60)
        batch_calls = [r for r in receiver.requests if r.path == "/batch"]
        job_calls = [r for r in receiver.requests if r.path == "/job"]
    assert len(batch_calls) == 3 and len(job_calls) == 1
    assert len({r.headers["webhook-id"] for r in batch_calls}) == 1
    event = verified(batch_calls[-1], batch["webhook_secret"])
    assert event["type"] == "batch.completed" and event["data"]["batch_id"] == batch["id"]
    assert event["data"]["counts"]["completed"] + \
        event["data"]["counts"]["insufficient_evidence"] == 2
    assert event["data"]["results_url"].endswith(f"/v1/batches/{batch['id']}/results")
    job_event = verified(job_calls[0], job.json()["webhook_secret"])
    assert job_event["type"] == "job.completed" and job_event["data"]["job_id"] == job.json()["id"]
    with session_scope(build_ledger_engine(stack.settings)) as session:
        rows = session.scalars(select(WebhookDeliveryRow).where(
            WebhookDeliveryRow.batch_id == batch["id"], WebhookDeliveryRow.job_id.is_(None))
            .order_by(WebhookDeliveryRow.attempt)).all()
    assert [(r.attempt, r.status_code) for r in rows] == [(1, 500), (2, 500), (3, 200)]
    assert {r.webhook_id for r in rows} == {batch_calls[0].headers["webhook-id"]}
