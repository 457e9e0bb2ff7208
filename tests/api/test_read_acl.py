"""A key reads only jobs whose ACL is within its own (results, evidence, ledger, batch
results), and /healthz names states without URLs or credentials. The app runs on a SQLite
ledger and an in-process broker (no stack)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from ragq.api import create_api
from ragq.ledger import create_api_key, session_scope
from ragq.settings import Settings
from ragq.workers.processes import free_port
from ragq.workers.resources import resources_for
from tests.fakes.broker import memory_settings


@pytest.fixture
def app_settings(tmp_path) -> Settings:
    return memory_settings(tmp_path / "home")


@pytest.fixture
def client(app_settings) -> Iterator[TestClient]:
    with TestClient(create_api(app_settings), raise_server_exceptions=False) as test_client:
        yield test_client


def key(settings: Settings, tenant: str, acl: list[str]) -> dict[str, str]:
    with session_scope(resources_for(settings).engine) as session:
        return {"Authorization": f"Bearer {create_api_key(session, tenant=tenant, acl=acl)[1]}"}


def test_a_public_key_cannot_read_a_staff_job_of_its_own_tenant(client, app_settings):
    staff, public = key(app_settings, "acme", ["public", "staff"]), key(app_settings, "acme",
                                                                        ["public"])
    job = client.post("/v1/jobs", headers=staff, json={"question": "Internal runbook?",
                                                       "acl": ["staff"]})
    assert job.status_code == 201, job.text
    job_id = job.json()["id"]
    for path in ("", "/evidence", "/ledger"):
        assert client.get(f"/v1/jobs/{job_id}{path}", headers=staff).status_code == 200
        hidden = client.get(f"/v1/jobs/{job_id}{path}", headers=public)
        assert hidden.status_code == 404 and hidden.json()["error"]["code"] == "not_found"
    mixed = client.post("/v1/jobs", headers=staff, json={"question": "Both?",
                                                         "acl": ["public", "staff"]})
    assert client.get(f"/v1/jobs/{mixed.json()['id']}", headers=public).status_code == 404
    open_job = client.post("/v1/jobs", headers=staff, json={"question": "Public?",
                                                            "acl": ["public"]})
    assert client.get(f"/v1/jobs/{open_job.json()['id']}", headers=public).status_code == 200


def test_batch_results_hide_the_jobs_outside_the_readers_acl(client, app_settings):
    staff, public = key(app_settings, "acme", ["public", "staff"]), key(app_settings, "acme",
                                                                        ["public"])
    tickets = [{"custom_id": "s", "question": "Staff only?", "acl": ["staff"]},
               {"custom_id": "p", "question": "Public?", "acl": ["public"]}]
    batch = client.post("/v1/batches", headers=staff, json={"tickets": tickets}).json()

    def results(headers: dict[str, str]) -> dict[str, dict]:
        text = client.get(f"/v1/batches/{batch['id']}/results", headers=headers).text
        return {r["custom_id"]: r for r in map(json.loads, text.splitlines())}

    seen_by_public = results(public)
    assert seen_by_public["s"]["error"]["code"] == "acl_not_allowed"
    assert "route" not in seen_by_public["s"] and "answer" not in seen_by_public["s"]
    assert "error" not in seen_by_public["p"]
    assert all("error" not in r for r in results(staff).values())


def test_healthz_names_states_without_urls_or_credentials(tmp_path):
    dead = free_port("127.0.0.1")
    settings = memory_settings(tmp_path / "home").model_copy(update={
        "broker_url": f"redis://ops:s3cret-pw@127.0.0.1:{dead}/0", "qdrant_url": ":memory:"})
    with TestClient(create_api(settings)) as test_client:
        response = test_client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["components"]["broker"] == {"ok": False,
                                            "detail": "not answering (ConnectionError)"}
    assert body["components"]["database"]["ok"] is True
    for secret in ("s3cret", "ops", "redis://", "127.0.0.1", str(dead), "sqlite", "ledger.db",
                   str(tmp_path)):
        assert secret not in response.text, secret
