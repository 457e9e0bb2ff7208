"""The URL layout lives in ``schemas.api`` once: the routers serve it and webhook payloads point
into it, so every URL an event carries reaches a served (authenticated) route. No stack needed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from ragq.api import create_api
from ragq.schemas import api as paths
from ragq.schemas.statuses import BatchStatus, JobStatus
from ragq.schemas.webhook import BatchEventCounts, batch_event, job_event
from ragq.settings import build_settings

NOW = datetime(2024, 5, 1, tzinfo=UTC)


@pytest.fixture
def client(tmp_path) -> TestClient:
    return TestClient(create_api(build_settings(home=tmp_path)))


def test_every_path_template_is_a_served_route(client: TestClient):
    templates = {value for name, value in vars(paths).items() if name.endswith("_PATH")}
    served = set(client.app.openapi()["paths"])
    assert templates == served


def test_the_urls_in_webhook_events_reach_authenticated_routes(client: TestClient):
    job = job_event(job_id="job_x", batch_id="bat_x", custom_id="c", stop_reason=None,
                    status=JobStatus.COMPLETED, at=NOW).data
    counts = BatchEventCounts(total=0, completed=0, insufficient_evidence=0, budget_exhausted=0,
                              failed=0, cancelled=0, invalid=0)
    batch = batch_event(batch_id="bat_x", status=BatchStatus.COMPLETED, counts=counts,
                        at=NOW).data
    for url in (job.results_url, batch.results_url, batch.errors_url):
        response = client.get(url)
        assert response.status_code == 401, (url, response.text)  # a route, not a 404
    assert client.get("/v1/nowhere/bat_x").status_code == 404
