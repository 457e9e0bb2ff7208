"""Batches over HTTP: JSONL uploads, limits that name the line, SSRF-guarded webhook URLs,
cancellation that keeps finished results."""

from __future__ import annotations

import json

import httpx
import pytest

from ragq.api import ApiServer
from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.workers.wiring import build_ledger_engine
from tests.api.conftest import auth, wait_batch, wait_until
from tests.tasks.carrying import wait_uncarried
from tests.tasks.test_flow import BRIDGE_DOCS, BRIDGE_QUESTION, write_jsonl


@pytest.fixture(scope="module")
def strict_api(stack):
    """An API with small limits and no private webhook targets, on the same stack."""
    settings = stack.settings.model_copy(update={
        "max_batch_lines": 3, "max_batch_bytes": 1500, "max_question_chars": 60,
        "webhook_allow_private": False})
    with ApiServer(settings) as server:
        yield server.base_url


def jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def tickets(n: int, question: str = "How are webhooks signed?") -> list[dict]:
    return [{"custom_id": f"t{i}", "question": question} for i in range(n)]


def test_a_jsonl_upload_creates_a_batch_with_bad_lines_in_its_errors(stack, api, make_key,
                                                                     collection, tmp_path):
    # a named collection must hold documents (an empty one is refused: unknown_collection)
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS[:1]),
                collection=collection)
    key = make_key("uploader")
    body = jsonl(tickets(2)) + b'{"custom_id": "broken", "question": \n'
    raw = httpx.post(f"{api}/v1/batches", headers={**auth(key), "content-type":
                     "application/jsonl"}, content=body, params={"collection": collection})
    assert raw.status_code == 201, raw.text
    form = httpx.post(f"{api}/v1/batches", headers=auth(key), data={"collection": collection},
                      files={"file": ("t.jsonl", jsonl(tickets(1)), "application/jsonl")})
    assert form.status_code == 201, form.text
    view = wait_batch(api, key, raw.json()["id"])
    assert view["counts"]["total"] == 2 and view["counts"]["invalid"] == 1
    assert view["cost_usd"] is not None and view["webhook_url"] is None
    errors = [json.loads(x) for x in httpx.get(
        f"{api}/v1/batches/{raw.json()['id']}/errors", headers=auth(key)).iter_lines() if x]
    (error,) = [e for e in errors if "job_id" not in e]  # the rest: jobs that failed, if any
    assert error["line"] == 3 and error["error"]["code"] == "invalid_json"
    assert wait_batch(api, key, form.json()["id"])["input_file"] == "t.jsonl"


def test_over_limit_uploads_are_refused_whole_and_long_tickets_fail_alone(strict_api, make_key):
    key = make_key("limited")
    headers = {**auth(key), "content-type": "application/jsonl"}
    lines = httpx.post(f"{strict_api}/v1/batches", headers=headers, content=jsonl(tickets(4)))
    assert lines.status_code == 413
    assert lines.json()["error"]["line"] == 4
    assert "RAGQ_MAX_BATCH_LINES" in lines.json()["error"]["message"]
    as_json = httpx.post(f"{strict_api}/v1/batches", headers=auth(key),
                         json={"tickets": tickets(4)})
    assert as_json.status_code == 413 and as_json.json()["error"]["limit"] == "max_batch_lines"
    big = httpx.post(f"{strict_api}/v1/batches", headers=headers,
                     content=jsonl(tickets(3, "x" * 50)) + b" " * 1500)
    assert big.status_code == 413 and "RAGQ_MAX_BATCH_BYTES" in big.text
    job = httpx.post(f"{strict_api}/v1/jobs", headers=auth(key), json={"question": "why " * 30})
    assert job.status_code == 422 and "RAGQ_MAX_QUESTION_CHARS" in job.text
    listed = httpx.get(f"{strict_api}/v1/batches", headers=auth(key)).json()
    assert listed["data"] == []  # nothing was half-accepted
    long = tickets(3)
    long[1]["question"] = "why " * 30  # a per-ticket limit: that ticket fails alone
    alone = httpx.post(f"{strict_api}/v1/batches", headers=headers, content=jsonl(long))
    assert alone.status_code == 201 and alone.json()["counts"]["invalid"] == 1
    (error,) = [json.loads(x) for x in httpx.get(
        f"{strict_api}/v1/batches/{alone.json()['id']}/errors", headers=auth(key)).iter_lines()
        if x and "job_id" not in json.loads(x)]
    assert (error["line"], error["error"]["code"]) == (2, "question_too_long")
    assert "over the limit of 60" in error["error"]["message"]


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/hook", "http://10.0.0.1/hook",
                                 "ftp://example.com/hook"])
def test_private_and_loopback_webhook_targets_are_refused(strict_api, make_key, url):
    key = make_key("ssrf")
    batch = httpx.post(f"{strict_api}/v1/batches", headers=auth(key),
                       json={"tickets": tickets(1), "webhook_url": url})
    assert batch.status_code == 422 and batch.json()["error"]["code"] == "invalid_webhook_url"
    job = httpx.post(f"{strict_api}/v1/jobs", headers=auth(key),
                     json={"question": "Hi?", "webhook_url": url})
    assert job.status_code == 422
    per_ticket = httpx.post(f"{strict_api}/v1/batches", headers=auth(key), json={
        "tickets": [{**tickets(1)[0], "webhook_url": url}]})
    assert per_ticket.status_code == 201
    assert per_ticket.json()["counts"]["invalid"] == 1


def test_cancel_over_http_stops_open_jobs_and_keeps_finished_results(
        stack, api, make_key, collection, tmp_path):
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    key = make_key("canceller")
    batch = httpx.post(f"{api}/v1/batches", headers=auth(key), json={
        "collection": collection, "tickets": tickets(30, BRIDGE_QUESTION)}).json()
    wait_until(lambda: httpx.get(f"{api}/v1/batches/{batch['id']}", headers=auth(key))
               .json()["counts"]["completed"] >= 1)
    cancelled = httpx.post(f"{api}/v1/batches/{batch['id']}/cancel", headers=auth(key))
    assert cancelled.status_code == 200
    count = cancelled.json()["cancelled_jobs"]
    view = wait_batch(api, key, batch["id"])
    assert view["status"] == "cancelled" and view["counts"]["cancelled"] == count >= 1
    got = [json.loads(x) for x in httpx.get(f"{api}/v1/batches/{batch['id']}/results",
                                            headers=auth(key)).iter_lines() if x]
    finished = [r for r in got if r["status"] == "completed"]
    assert finished and all(r["answer"] for r in finished)
    stopped = [r["job_id"] for r in got if r["status"] == "cancelled"]
    assert len(stopped) == count
    # In-flight steps may finish; after them no cancelled job gets new work: nothing carries
    # them any more (work that went on would keep them queued or held, and this wait fail).
    wait_uncarried(stack.settings, stopped, timeout_s=120)
    again = httpx.post(f"{api}/v1/batches/{batch['id']}/cancel", headers=auth(key)).json()
    assert again["cancelled_jobs"] == 0
    assert httpx.post(f"{api}/v1/batches/bat_nope/cancel", headers=auth(key)).status_code == 404


def test_a_jsonl_upload_carries_a_validated_batch_budget(api, make_key, collection, stack):
    from ragq.ledger.models import BatchRow

    key = make_key("budgeted")
    headers = {**auth(key), "content-type": "application/jsonl"}
    bad = httpx.post(f"{api}/v1/batches", headers=headers, content=jsonl(tickets(1)),
                     params={"collection": collection, "budget": '{"max_steps": -1}'})
    assert bad.status_code == 422 and "max_steps" in bad.text
    good = httpx.post(f"{api}/v1/batches", headers=headers, content=jsonl(tickets(1)),
                      params={"collection": collection, "budget": '{"max_steps": 2}'})
    assert good.status_code == 201, good.text
    with session_scope(build_ledger_engine(stack.settings)) as session:
        assert session.get(BatchRow, good.json()["id"]).budget == {"max_steps": 2}
