"""The review queue through every front door without a stack (SQLite ledger, in-process
broker): jobs end ``needs_review`` through the flow's own ledger writer, then are listed,
answered and rejected by the submission core, over HTTP and at the CLI; unknown jobs are 404,
jobs not in the queue 409, another tenant's or a narrower key's jobs invisible."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from ragq import submission
from ragq.api import create_api
from ragq.cli.main import app as cli_app
from ragq.errors import NotAwaitingReviewError, NotFoundError, ReviewInputError
from ragq.ledger import SqlFlowLedger, batch_report, create_api_key, session_scope
from ragq.orchestration.flow import Escalation, FinishJob, RecordAnswer
from ragq.schemas.flow import Citation, DraftAnswer
from ragq.schemas.statuses import JobStatus
from ragq.schemas.tasks import Queue, Task
from ragq.settings import Settings
from ragq.submission import BatchOptions, Caller
from ragq.workers.resources import resources_for
from tests.fakes.broker import drain

HOOK = "http://127.0.0.1:9/hook"  # allowed as private here, never called
DRAFT = DraftAnswer(answer="Refunds take 14 days.", extractive=True,
                    citations=[Citation(doc_id="refunds", chunk_id="refunds::0",
                                        quote="Refunds take 14 days.")])


def submit(settings: Settings, n: int, *, acl: list[str] | None = None,
           webhook_url: str | None = None) -> submission.Submitted:
    records = [{"custom_id": f"t{i}", "question": f"Why did refund {i} fail?",
                **({"acl": acl} if acl else {})} for i in range(n)]
    parsed = submission.read_tickets([json.dumps(r) for r in records],
                                     limits=submission.limits_of(settings), source="t")
    sent = submission.submit_tickets(settings, parsed, collection=None, source=None,
                                     options=BatchOptions(webhook_url=webhook_url))
    drain(settings, Queue.MODELS)
    return sent


def end(settings: Settings, job_id: str, *, review: bool = True) -> None:
    """End a job as the synthesizer's step does: its answer, then its ending."""
    ledger = SqlFlowLedger(resources_for(settings).engine)
    escalation = Escalation(("route:escalate",), JobStatus.COMPLETED) if review else None
    with ledger.transaction() as writer:
        writer.write(job_id, RecordAnswer(DRAFT, {}))
        writer.write(job_id, FinishJob(JobStatus.NEEDS_REVIEW if review else JobStatus.COMPLETED,
                                       "sufficient", 12, review=escalation))


@pytest.fixture
def settings(memory_broker: Settings) -> Settings:
    return memory_broker.model_copy(update={"webhook_allow_private": True})


def test_a_job_needing_review_has_ended_for_its_batch_and_waits_in_the_queue(
        settings: Settings) -> None:
    sent = submit(settings, 2)
    end(settings, sent.job_ids[0])
    end(settings, sent.job_ids[1], review=False)
    batch = submission.describe(settings, sent.batch_id)
    assert batch["status"] == "completed"
    assert (batch["counts"]["needs_review"], batch["counts"]["completed"],
            batch["counts"]["finished"]) == (1, 1, 2)
    [item] = submission.review_queue(settings)
    assert item["job_id"] == sent.job_ids[0] and item["status"] == "needs_review"
    assert (item["reasons"], item["outcome"]) == (["route:escalate"], "completed")
    assert item["draft_answer"] == DRAFT.answer and item["citations"][0]["doc_id"] == "refunds"
    result = submission.describe(settings, sent.job_ids[0])["result"]
    assert result["status"] == "needs_review"
    assert result["review"] == {"reasons": ["route:escalate"], "outcome": "completed"}
    assert "review" not in submission.describe(settings, sent.job_ids[1])["result"]


def test_an_answer_completes_the_job_and_a_rejection_rejects_it(settings: Settings) -> None:
    sent = submit(settings, 2)
    for job_id in sent.job_ids:
        end(settings, job_id)
    answered = submission.resolve(settings, sent.job_ids[0], submission.resolution_of(
        answer="Refunds take 30 days since May.\n", reject=False, note="policy changed",
        reviewer="cli"))
    rejected = submission.resolve(settings, sent.job_ids[1], submission.resolution_of(
        answer=None, reject=True, note="not our product", reviewer="cli"))
    assert (answered["status"], rejected["status"]) == ("completed", "rejected")
    first, second = submission.results(settings, sent.batch_id)  # the batch's results file
    assert first["answer"] == "Refunds take 30 days since May."
    assert first["reviewed"]["decision"] == "answered"
    assert first["reviewed"]["draft_answer"] == DRAFT.answer
    assert (first["reviewed"]["reviewer"], first["reviewed"]["note"]) == ("cli", "policy changed")
    assert first["citations"] == second["citations"]  # the evidence the draft rested on stays
    assert (second["status"], second["answer"]) == ("rejected", None)
    assert second["reviewed"]["decision"] == "rejected"
    counts = submission.describe(settings, sent.batch_id)["counts"]
    assert (counts["needs_review"], counts["completed"], counts["rejected"]) == (0, 1, 1)
    assert submission.review_queue(settings) == []
    everything = submission.review_queue(settings, pending=False)
    assert [i["resolved"]["decision"] for i in everything] == ["answered", "rejected"]
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        report = batch_report(session, sent.batch_id)
    assert (report.totals.escalated_jobs, report.totals.escalation_rate) == (2, 1.0)


def test_only_a_job_in_the_queue_can_be_resolved(settings: Settings) -> None:
    sent = submit(settings, 2)
    end(settings, sent.job_ids[0])
    reject = submission.resolution_of(answer=None, reject=True, note=None, reviewer="cli")
    submission.resolve(settings, sent.job_ids[0], reject)
    with pytest.raises(NotAwaitingReviewError, match="rejected, not awaiting review"):
        submission.resolve(settings, sent.job_ids[0], reject)  # resolved already
    with pytest.raises(NotAwaitingReviewError, match="queued"):
        submission.resolve(settings, sent.job_ids[1], reject)  # still running
    with pytest.raises(NotFoundError):
        submission.resolve(settings, "job_nope", reject)


@pytest.mark.parametrize("answer, reject", [(None, False), ("An answer.", True), ("  \n", False)])
def test_a_resolution_is_an_answer_or_a_rejection(answer: str | None, reject: bool) -> None:
    with pytest.raises(ReviewInputError):
        submission.resolution_of(answer=answer, reject=reject, note=None, reviewer="cli")


def test_resolving_sends_job_reviewed_to_the_batch_webhook(settings: Settings) -> None:
    sent = submit(settings, 1, webhook_url=HOOK)
    end(settings, sent.job_ids[0])
    queued = drain(settings, Queue.BOOKKEEPING)  # nothing sent it yet: the flow's runner does
    assert queued == []
    submission.resolve(settings, sent.job_ids[0], submission.resolution_of(
        answer="Yes.", reject=False, note=None, reviewer="cli"))
    events = drain(settings, Queue.BOOKKEEPING)
    assert {name for name, _ in events} == {Task.DELIVER_WEBHOOK}
    trail = submission.trail(settings, sent.job_ids[0])
    kinds = [d["event_type"] for d in trail["webhook_deliveries"]]
    assert sorted(kinds) == ["job.needs_review", "job.reviewed"]


# --- over HTTP ------------------------------------------------------------------------------


def key(settings: Settings, tenant: str, acl: list[str]) -> dict[str, str]:
    with session_scope(resources_for(settings).engine) as session:
        return {"Authorization": f"Bearer {create_api_key(session, tenant=tenant, acl=acl)[1]}"}


def test_the_queue_over_http_lists_resolves_and_refuses(settings: Settings) -> None:
    client = TestClient(create_api(settings))
    mine = key(settings, settings.tenant, ["public"])
    other = key(settings, "someone-else", ["public"])
    sent = submit(settings, 3)
    for job_id in sent.job_ids[:2]:
        end(settings, job_id)
    listed = client.get("/v1/review", headers=mine).json()["data"]
    assert [i["job_id"] for i in listed] == sent.job_ids[:2]
    assert client.get("/v1/review", headers=other).json()["data"] == []
    answered = client.post(f"/v1/review/{sent.job_ids[0]}", headers=mine,
                           json={"answer": "Refunds take 30 days."})
    assert answered.status_code == 200 and answered.json()["status"] == "completed"
    assert answered.json()["result"]["reviewed"]["reviewer"].startswith("key_")
    hidden = client.post(f"/v1/review/{sent.job_ids[1]}", headers=other, json={"reject": True})
    assert hidden.status_code == 404 and hidden.json()["error"]["code"] == "not_found"
    rejected = client.post(f"/v1/review/{sent.job_ids[1]}", headers=mine,
                           json={"reject": True, "reason": "duplicate ticket"})
    assert rejected.json()["result"]["reviewed"]["note"] == "duplicate ticket"
    again = client.post(f"/v1/review/{sent.job_ids[1]}", headers=mine, json={"reject": True})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "not_awaiting_review"
    running = client.post(f"/v1/review/{sent.job_ids[2]}", headers=mine, json={"reject": True})
    assert running.status_code == 409
    unknown = client.post("/v1/review/job_unknown", headers=mine, json={"reject": True})
    assert unknown.status_code == 404 and "error" in unknown.json()
    both = client.post(f"/v1/review/{sent.job_ids[2]}", headers=mine,
                       json={"answer": "x", "reject": True})
    assert both.status_code == 422 and both.json()["error"]["code"] == "invalid_input"
    assert client.get("/v1/review", headers=mine).json()["data"] == []
    assert client.get("/v1/review").status_code == 401


def test_a_key_sees_only_reviews_within_its_acl(settings: Settings) -> None:
    client = TestClient(create_api(settings))
    staff = submit(settings, 1, acl=["public", "staff"])
    end(settings, staff.job_ids[0])
    narrow = key(settings, settings.tenant, ["public"])
    wide = key(settings, settings.tenant, ["public", "staff"])
    assert client.get("/v1/review", headers=narrow).json()["data"] == []
    assert [i["job_id"] for i in client.get("/v1/review", headers=wide).json()["data"]] == [
        staff.job_ids[0]]
    refused = client.post(f"/v1/review/{staff.job_ids[0]}", headers=narrow,
                          json={"reject": True})
    assert refused.status_code == 404
    assert submission.describe(settings, staff.job_ids[0])["status"] == "needs_review"
    assert Caller(settings.tenant).name == "cli"


# --- at the CLI -----------------------------------------------------------------------------


@pytest.fixture
def cli_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The CLI reads its settings from RAGQ_ env: point it at this test's ledger and broker."""
    for name in [k for k in os.environ if k.startswith("RAGQ_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("RAGQ_HOME", str(settings.home))
    monkeypatch.setenv("RAGQ_BROKER_URL", "memory://")
    monkeypatch.setenv("RAGQ_RESULT_BACKEND_URL", "cache+memory://")
    return settings


def cli(*args: str) -> Any:
    return CliRunner().invoke(cli_app, list(args))


def test_review_list_and_resolve_at_the_cli(cli_env: Settings, tmp_path: Path) -> None:
    sent = submit(cli_env, 2)
    for job_id in sent.job_ids:
        end(cli_env, job_id)
    listed = cli("review", "list", "--json")
    assert listed.exit_code == 0, listed.output
    assert [i["job_id"] for i in json.loads(listed.stdout)] == sent.job_ids
    answer = tmp_path / "answer.txt"
    answer.write_text("Refunds take 30 days.\n", encoding="utf-8")
    done = cli("review", "resolve", sent.job_ids[0], "--answer", str(answer), "--json")
    assert done.exit_code == 0, done.output
    view = json.loads(done.stdout)
    assert (view["status"], view["result"]["answer"]) == ("completed", "Refunds take 30 days.")
    assert view["result"]["reviewed"]["reviewer"] == "cli"
    rejected = cli("review", "resolve", sent.job_ids[1], "--reject", "--note", "spam")
    assert rejected.exit_code == 0 and "rejected" in rejected.stdout
    table = cli("review", "list", "--all")
    assert table.exit_code == 0 and sent.job_ids[0] in table.stdout
    neither = cli("review", "resolve", sent.job_ids[1])
    assert isinstance(neither.exception, ReviewInputError)
    twice = cli("review", "resolve", sent.job_ids[1], "--reject")
    assert isinstance(twice.exception, NotAwaitingReviewError)
    missing = cli("review", "resolve", sent.job_ids[1], "--answer", str(tmp_path / "none.txt"))
    assert "no such answer file" in str(missing.exception)
    report = cli("ledger", "batch", sent.batch_id, "--json")
    assert json.loads(report.stdout)["totals"]["escalated_jobs"] == 2
    table = cli("ledger", "batch", sent.batch_id)
    assert "sent to review: 2 of 2 finished jobs (100.0%)" in table.stdout
