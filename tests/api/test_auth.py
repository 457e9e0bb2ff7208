"""API keys and tenants: 401 without a valid key, another tenant's batch is a 404, and a key's
ACL caps what its jobs may retrieve."""

from __future__ import annotations

import json

import httpx
from sqlalchemy import select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import revoke_api_key, session_scope
from ragq.ledger.models import ApiKeyRow
from ragq.workers.wiring import build_ledger_engine
from tests.api.conftest import auth, wait_batch
from tests.tasks.test_flow import write_jsonl

SECRET_DOCS = [
    {"id": "bonus-handbook", "title": "Staff bonus handbook", "acl": ["staff"],
     "text": "The staff bonus code for the winter quarter is HALCYON-42. Only staff may use it."},
    {"id": "public-faq", "title": "Public FAQ", "acl": ["public"],
     "text": "The winter quarter runs from December to February. Support is open all quarter."},
]
QUESTION = "What is the staff bonus code for the winter quarter?"


def test_requests_without_a_valid_key_get_401(stack, api, make_key):
    assert httpx.get(f"{api}/v1/batches").status_code == 401
    wrong = httpx.get(f"{api}/v1/batches", headers=auth("rq_not-a-key"))
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
    assert "API key" in wrong.json()["error"]["message"]
    key = make_key("revoked-tenant")
    assert httpx.get(f"{api}/v1/batches", headers=auth(key)).status_code == 200
    with session_scope(build_ledger_engine(stack.settings)) as session:
        row = session.scalars(select(ApiKeyRow).where(ApiKeyRow.tenant == "revoked-tenant")).one()
        assert row.key_hash != key and key not in row.key_hash  # only the hash is stored
        revoke_api_key(session, key_id=row.id)
    assert httpx.get(f"{api}/v1/batches", headers=auth(key)).status_code == 401


def test_a_tenant_never_sees_another_tenants_batches_or_jobs(stack, api, make_key, collection,
                                                             tmp_path):
    # a named collection must hold documents (an empty one is refused: unknown_collection)
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", SECRET_DOCS[1:]),
                collection=collection)
    alice, bob = make_key("alice"), make_key("bob")
    created = httpx.post(f"{api}/v1/batches", headers=auth(alice), json={
        "collection": collection, "tickets": [{"custom_id": "x", "question": "Anything?"}]})
    batch_id = created.json()["id"]
    job = httpx.post(f"{api}/v1/jobs", headers=auth(alice),
                     json={"question": "Anything?", "collection": collection}).json()
    for path in (f"/v1/batches/{batch_id}", f"/v1/batches/{batch_id}/results",
                 f"/v1/batches/{batch_id}/errors", f"/v1/jobs/{job['id']}",
                 f"/v1/jobs/{job['id']}/evidence", f"/v1/jobs/{job['id']}/ledger"):
        assert httpx.get(f"{api}{path}", headers=auth(bob)).status_code == 404, path
        assert httpx.get(f"{api}{path}", headers=auth(alice)).status_code == 200, path
    cancel = httpx.post(f"{api}/v1/batches/{batch_id}/cancel", headers=auth(bob))
    assert cancel.status_code == 404
    listed = httpx.get(f"{api}/v1/batches", headers=auth(bob)).json()
    assert batch_id not in {b["id"] for b in listed["data"]}
    mine = httpx.get(f"{api}/v1/batches", headers=auth(alice), params={"limit": 1}).json()
    assert mine["data"][0]["id"] == batch_id and mine["has_more"] is False
    wait_batch(api, alice, batch_id)


def evidence_docs(api: str, key: str, job_id: str) -> set[str]:
    response = httpx.get(f"{api}/v1/jobs/{job_id}/evidence", headers=auth(key))
    return {e["doc_id"] for e in response.json()}


def test_a_keys_acl_caps_what_its_jobs_retrieve(stack, api, make_key, collection, tmp_path):
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", SECRET_DOCS),
                collection=collection)
    public, staff = make_key("acl-co", ["public"]), make_key("acl-co", ["staff", "public"])
    tickets = [{"custom_id": "asks-staff", "question": QUESTION, "acl": ["staff", "public"]},
               {"custom_id": "no-acl", "question": QUESTION},
               {"custom_id": "only-staff", "question": QUESTION, "acl": ["staff"]}]
    capped = httpx.post(f"{api}/v1/batches", headers=auth(public),
                        json={"collection": collection, "tickets": tickets}).json()
    control = httpx.post(f"{api}/v1/batches", headers=auth(staff),
                         json={"collection": collection, "tickets": tickets[:1]}).json()
    assert wait_batch(api, public, capped["id"])["counts"]["invalid"] == 1
    wait_batch(api, staff, control["id"])
    got = [line for line in httpx.get(f"{api}/v1/batches/{capped['id']}/results",
                                      headers=auth(public)).iter_lines() if line]
    assert len(got) == 2
    errors = httpx.get(f"{api}/v1/batches/{capped['id']}/errors", headers=auth(public)).text
    assert "acl_not_allowed" in errors and '"line": 3' in errors
    for job_id in [json.loads(r)["job_id"] for r in got]:
        docs = evidence_docs(api, public, job_id)
        assert "public-faq" in docs and "bonus-handbook" not in docs
        answer = httpx.get(f"{api}/v1/jobs/{job_id}", headers=auth(public)).json()["result"]
        assert "HALCYON" not in (answer.get("answer") or "")
    control_job = httpx.get(f"{api}/v1/batches/{control['id']}/results",
                            headers=auth(staff)).json()["job_id"]
    assert "bonus-handbook" in evidence_docs(api, staff, control_job)  # the cap is what hid it
