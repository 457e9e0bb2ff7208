"""/healthz reports each component and fails with 503 when one is down; /metrics exposes the
ledger and queue figures in Prometheus format; the OpenAPI document lists the contract routes."""

from __future__ import annotations

import httpx

from ragq.api import ApiServer
from ragq.ingestion.submit import ingest_path
from ragq.workers.processes import free_port
from tests.tasks.test_flow import write_jsonl


def test_healthz_is_200_with_every_component_up(api):
    response = httpx.get(f"{api}/healthz", timeout=10)
    assert response.status_code == 200, response.text
    assert {k: v["ok"] for k, v in response.json()["components"].items()} == {
        "broker": True, "database": True, "vector_store": True}


def test_healthz_is_503_naming_the_component_that_is_down(stack):
    dead = f"redis://127.0.0.1:{free_port('127.0.0.1')}/0"
    settings = stack.settings.model_copy(update={"broker_url": dead, "qdrant_url": ":memory:"})
    with ApiServer(settings) as server:
        response = httpx.get(f"{server.base_url}/healthz", timeout=10)
    assert response.status_code == 503
    components = response.json()["components"]
    assert components["broker"]["ok"] is False and components["database"]["ok"] is True


def test_metrics_expose_jobs_queues_cost_and_webhooks(stack, api, make_key, collection, tmp_path):
    # a named collection must hold documents (an empty one is refused: unknown_collection)
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", [
        {"id": "d1", "text": "Anything at all is answered from this page."}]),
        collection=collection)
    key = make_key("metrics")
    before = _jobs(httpx.get(f"{api}/metrics", timeout=10).text)
    posted = httpx.post(f"{api}/v1/jobs", headers={"Authorization": f"Bearer {key}"},
                        json={"question": "Anything at all?", "collection": collection})
    assert posted.status_code == 201, posted.text
    text = httpx.get(f"{api}/metrics", timeout=10).text
    for needle in ('ragq_jobs{status="queued"}', 'ragq_jobs{status="completed"}',
                   "ragq_batches_in_progress", 'ragq_queue_depth{queue="models"}',
                   'ragq_queue_depth{queue="bookkeeping"}', "ragq_budget_exhausted_jobs_total",
                   "ragq_cost_usd_total", "ragq_webhook_failed_attempts_total"):
        assert needle in text, needle
    assert _jobs(text) == before + 1  # the job just posted, in whatever status it has reached


def _jobs(metrics: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if line.startswith("ragq_jobs{"))


def test_openapi_documents_the_contract_routes(api):
    paths = httpx.get(f"{api}/openapi.json").json()["paths"]
    for path in ("/v1/batches", "/v1/batches/{batch_id}", "/v1/batches/{batch_id}/results",
                 "/v1/batches/{batch_id}/errors", "/v1/batches/{batch_id}/cancel", "/v1/jobs",
                 "/v1/jobs/{job_id}", "/v1/jobs/{job_id}/evidence", "/v1/jobs/{job_id}/ledger",
                 "/healthz", "/metrics"):
        assert path in paths, path
    assert "application/jsonl" in paths["/v1/batches"]["post"]["requestBody"]["content"]
