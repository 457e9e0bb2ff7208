"""The review queue on the real stack: tickets the router sends down the escalate route end
``needs_review`` (their batch completes), a signed ``job.needs_review`` reaches the batch's
webhook, a reviewer answers one and rejects another over HTTP, and the signed ``job.reviewed``
events, the batch's results file and the jobs' ledger trails all show the resolutions."""

from __future__ import annotations

import json

import httpx

from ragq.ingestion.submit import ingest_path
from tests.api.conftest import auth, wait_batch, wait_until
from tests.api.test_webhooks_e2e import verified
from tests.fakes.http import LoopbackServer, Reply
from tests.tasks.test_flow import BRIDGE_DOCS, BRIDGE_QUESTION, write_jsonl


def test_escalated_jobs_are_reviewed_over_http_with_signed_events(
        stack, api, make_key, collection, tmp_path):
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    key = make_key("reviewers")
    with LoopbackServer() as receiver:
        receiver.route("POST", "/hook", lambda r: Reply(204, b""))
        created = httpx.post(f"{api}/v1/batches", headers=auth(key), json={
            "collection": collection, "webhook_url": f"{receiver.base_url}/hook",
            "tickets": [
                # the route is input: escalate is the route the review policy always reviews
                {"custom_id": "e1", "question": BRIDGE_QUESTION, "route": "escalate"},
                {"custom_id": "e2", "question": "Who makes the Nimbus drone?",
                 "route": "escalate"},
                {"custom_id": "s1", "question": "Who makes the Nimbus drone?",
                 "route": "simple"}]})
        assert created.status_code == 201, created.text
        batch, secret = created.json(), created.json()["webhook_secret"]
        view = wait_batch(api, key, batch["id"])
        assert view["status"] == "completed"  # jobs waiting for review have ended for it
        assert view["counts"]["needs_review"] == 2
        queue = httpx.get(f"{api}/v1/review", headers=auth(key)).json()["data"]
        by_custom = {item["custom_id"]: item for item in queue}
        assert set(by_custom) == {"e1", "e2"}
        assert by_custom["e1"]["reasons"] == ["route:escalate"]
        assert by_custom["e1"]["draft_answer"] and by_custom["e1"]["evidence_doc_ids"]
        first, second = by_custom["e1"]["job_id"], by_custom["e2"]["job_id"]
        answered = httpx.post(f"{api}/v1/review/{first}", headers=auth(key),
                              json={"answer": "Mara Quint founded Orion Labs."})
        assert answered.status_code == 200, answered.text
        rejected = httpx.post(f"{api}/v1/review/{second}", headers=auth(key),
                              json={"reject": True, "reason": "ask the customer"})
        assert rejected.json()["status"] == "rejected"
        again = httpx.post(f"{api}/v1/review/{second}", headers=auth(key),
                           json={"reject": True})
        assert again.status_code == 409
        wait_until(lambda: receiver.count("POST", "/hook") >= 5, timeout_s=60)
        events = [verified(r, secret) for r in receiver.requests if r.path == "/hook"]
    kinds = sorted((e["type"], e["data"].get("job_id"), e["data"]["status"]) for e in events)
    assert kinds == sorted([
        ("batch.completed", None, "completed"),
        ("job.needs_review", first, "needs_review"), ("job.needs_review", second, "needs_review"),
        ("job.reviewed", first, "completed"), ("job.reviewed", second, "rejected")])
    results = httpx.get(f"{api}/v1/batches/{batch['id']}/results", headers=auth(key))
    lines = {r["custom_id"]: r for r in map(json.loads, results.text.splitlines())}
    assert lines["e1"]["status"] == "completed"
    assert lines["e1"]["answer"] == "Mara Quint founded Orion Labs."
    assert lines["e1"]["reviewed"]["decision"] == "answered"
    assert lines["e1"]["review"]["reasons"] == ["route:escalate"]
    assert lines["e2"]["status"] == "rejected" and lines["e2"]["reviewed"]["note"] == (
        "ask the customer")
    assert lines["s1"]["status"] in {"completed", "insufficient_evidence"}
    assert "review" not in lines["s1"]
    trail = httpx.get(f"{api}/v1/jobs/{first}/ledger", headers=auth(key)).json()
    (review,) = trail["reviews"]
    assert review["decision"] == "answered" and review["reviewer"].startswith("key_")
    assert review["resolved_at"] and review["answer"] == "Mara Quint founded Orion Labs."
    assert httpx.get(f"{api}/v1/review", headers=auth(key)).json()["data"] == []
