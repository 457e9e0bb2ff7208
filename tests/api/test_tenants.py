"""Tenants' shares over HTTP, the CLI and /metrics (issue 36): any key reads its own tenant,
only an admin tenant's key sets shares, the CLI sets them with no key, and what is set is what
the waiting line reads. No stack: a migrated SQLite ledger and an in-process broker."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragq import submission
from ragq.api import create_api
from ragq.ledger import create_api_key, session_scope, tenant_share
from ragq.orchestration.fair_share import TenantShare
from ragq.settings import Settings
from ragq.workers.resources import resources_for
from tests.fakes.broker import hold_documents, memory_settings
from tests.malformed.cli_harness import cli_env, run_cli


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    settings = memory_settings(tmp_path / "home", admin_tenants=("ops",), max_open_jobs=1,
                               interactive_reserve=0)
    hold_documents(settings, "kb")
    return settings


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_api(settings), raise_server_exceptions=False) as test_client:
        yield test_client


def key_of(settings: Settings, tenant: str) -> dict[str, str]:
    with session_scope(resources_for(settings).engine) as session:
        key = create_api_key(session, tenant=tenant, acl=["public"])[1]
    return {"Authorization": f"Bearer {key}"}


def share_of(settings: Settings, tenant: str) -> TenantShare:
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        return tenant_share(session, tenant=tenant)


def test_only_an_admin_tenants_key_sets_a_share(settings, client):
    acme, ops = key_of(settings, "acme"), key_of(settings, "ops")
    refused = client.put("/v1/tenants/acme", json={"weight": 9}, headers=acme)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert share_of(settings, "acme") == TenantShare()
    done = client.put("/v1/tenants/acme", json={"weight": 3, "max_open_jobs": 5}, headers=ops)
    assert done.status_code == 200, done.text
    assert done.json() == {"tenant": "acme", "weight": 3, "max_open_jobs": 5, "open_jobs": 0,
                           "waiting_jobs": 0}
    kept = client.put("/v1/tenants/acme", json={"max_open_jobs": None}, headers=ops).json()
    assert (kept["weight"], kept["max_open_jobs"]) == (3, None)  # a field left out is kept
    assert share_of(settings, "acme") == TenantShare(3, None)
    bad = client.put("/v1/tenants/acme", json={"weight": 0}, headers=ops)
    assert bad.status_code == 422 and bad.json()["error"]["code"]


def test_a_key_reads_its_own_tenant_an_admin_every_tenant(settings, client):
    acme, ops = key_of(settings, "acme"), key_of(settings, "ops")
    for n in range(3):  # a window of one: the first opens, two wait
        client.post("/v1/jobs", json={"question": f"refund window {n}?", "collection": "kb"},
                    headers=acme)
    own = client.get("/v1/tenants", headers=acme).json()["data"]
    assert own == [{"tenant": "acme", "weight": 1, "max_open_jobs": None, "open_jobs": 1,
                    "waiting_jobs": 2}]
    every = client.get("/v1/tenants", headers=ops).json()["data"]
    assert [t["tenant"] for t in every] == ["acme"]  # ops has no share set and no jobs
    metrics = client.get("/metrics").text
    assert 'ragq_tenant_open_jobs{tenant="acme"} 1.0' in metrics
    assert 'ragq_tenant_waiting_jobs{tenant="acme"} 2.0' in metrics


def test_the_cli_sets_and_lists_shares(settings, monkeypatch, capsys):
    env = cli_env(settings.home)
    run = run_cli(["tenants", "set", "acme", "--weight", "2", "--max-open-jobs", "4",
                   "--json"], env, monkeypatch, capsys)
    assert run.code == 0, run.err
    assert json.loads(run.out)["weight"] == 2 and share_of(settings, "acme") == TenantShare(2, 4)
    run = run_cli(["tenants", "set", "acme", "--max-open-jobs", "none"], env, monkeypatch,
                  capsys)
    assert run.code == 0 and share_of(settings, "acme") == TenantShare(2, None)
    run = run_cli(["tenants", "set", "acme"], env, monkeypatch, capsys)
    assert run.code == 2 and "--weight" in run.err
    run = run_cli(["tenants", "set", "acme", "--max-open-jobs", "-1"], env, monkeypatch,
                  capsys)
    assert run.code == 1 and "max_open_jobs" in run.err
    submission.ask(settings, {"question": "How long is the refund window?"}, collection="kb")
    run = run_cli(["tenants", "list", "--json"], env, monkeypatch, capsys)
    views = {v["tenant"]: v for v in json.loads(run.out)}
    assert views["acme"]["weight"] == 2 and views[settings.tenant]["open_jobs"] == 1
    run = run_cli(["status", "--json"], env, monkeypatch, capsys)
    assert {t["tenant"] for t in json.loads(run.out)["tenants"]} == {"acme", settings.tenant}
