"""The front doors' read side: a batch's cost, a job's trail and evidence, the metrics figures
and the ping, each over rows of two batches so nothing of one leaks into the other."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from ragq.ledger import (
    TRAIL_TABLES,
    LedgerUnavailableError,
    add_job,
    batch_cost,
    create_batch,
    disable_endpoint,
    ensure_endpoint,
    evidence_records,
    job_trail,
    make_engine,
    metrics_snapshot,
    ping,
    record_attempt,
    session_scope,
    start_batch,
)
from ragq.ledger.models import (
    EvidenceItemRow,
    ModelCallRow,
    RetrievalRequestRow,
    WebhookDeliveryRow,
)
from ragq.schemas.statuses import JobStatus


def job_with_spend(session: Session, batch_id: str | None, costs: list[str], *,
                   status: JobStatus = JobStatus.QUEUED, hits: int = 0) -> str:
    """A job with a model call per cost and one retrieval of ``hits`` evidence items."""
    job = add_job(session, batch_id=batch_id, custom_id=None, position=None, tenant="t",
                  collection="c", question="q?", acl=["public"])
    job.status = status
    for n, cost in enumerate(costs):
        session.add(ModelCallRow(job_id=job.id, role="synthesizer", provider="fake", model="m",
                                 call_key=f"k{n}", cost_usd=Decimal(cost), latency_ms=3))
    request = RetrievalRequestRow(job_id=job.id, attempt=0, query_text="q", normalized_key="q",
                                  top_k=5)
    session.add(request)
    session.flush()
    for rank in range(hits):
        session.add(EvidenceItemRow(job_id=job.id, retrieval_request_id=request.id,
                                    doc_id=f"d{rank}", chunk_id=f"d{rank}#0", score=0.9 - rank / 10,
                                    rank=rank, source_version="v1", text="t"))
    session.flush()
    return job.id


def two_batches(engine: Engine) -> tuple[str, list[str], str]:
    """(batch id, its job ids, a job of another batch), with known spend."""
    with session_scope(engine) as session:
        mine = create_batch(session, tenant="t", collection="c", input_filename=None).id
        jobs = [job_with_spend(session, mine, ["0.25", "0.125"], hits=2),
                job_with_spend(session, mine, ["0.5"], status=JobStatus.COMPLETED)]
        start_batch(session, batch_id=mine)
        other = create_batch(session, tenant="t", collection="c", input_filename=None).id
        foreign = job_with_spend(session, other, ["4"], status=JobStatus.BUDGET_EXHAUSTED)
        return mine, jobs, foreign


def test_a_batch_costs_what_its_own_jobs_spent(engine: Engine):
    mine, _, _ = two_batches(engine)
    with session_scope(engine, readonly=True) as session:
        assert batch_cost(session, batch_id=mine) == pytest.approx(0.875)
        assert batch_cost(session, batch_id="bat_none") == 0.0


def test_a_trail_has_every_table_and_only_the_jobs_rows(engine: Engine):
    _, jobs, _ = two_batches(engine)
    with session_scope(engine, readonly=True) as session:
        trail = job_trail(session, job_id=jobs[0])
        evidence = evidence_records(session, job_id=jobs[0])
        nothing = job_trail(session, job_id="job_none")
    assert tuple(trail) == TRAIL_TABLES
    calls = trail["model_calls"]
    assert sorted(c["cost_usd"] for c in calls) == [0.125, 0.25]  # money as float, for JSON
    assert {c["job_id"] for c in calls} == {jobs[0]}
    assert len(trail["retrieval_requests"]) == 1 and trail["plans"] == []
    assert [(e["doc_id"], e["rank"]) for e in evidence] == [("d0", 0), ("d1", 1)]
    assert all(e["job_id"] == jobs[0] for e in evidence)
    assert all(rows == [] for rows in nothing.values())


def test_the_metrics_snapshot_counts_the_whole_ledger(engine: Engine):
    two_batches(engine)
    with session_scope(engine) as session:
        endpoint = ensure_endpoint(session, tenant="t", url="https://h.example/x",
                                   new_secret=lambda: "whsec_x")
        for n, (code, error) in enumerate([(500, "HTTP 500"), (None, "timed out"),
                                           (200, None), (None, "sending")]):
            session.add(WebhookDeliveryRow(webhook_id=f"msg_{n}", endpoint_id=endpoint.id,
                                           event_type="job.completed", url=endpoint.url,
                                           payload={}, attempt=1))
            session.flush()
            record_attempt(session, webhook_id=f"msg_{n}", attempt=1, status_code=code,
                           error=error)
        disable_endpoint(session, endpoint_id=endpoint.id, reason="410")
    with session_scope(engine, readonly=True) as session:
        snap = metrics_snapshot(session)
    assert snap.jobs_by_status == {"queued": 1, "completed": 1, "budget_exhausted": 1}
    assert snap.batches_in_progress == 1  # the other batch never started
    assert snap.cost_usd == pytest.approx(4.875)
    assert snap.failed_webhook_attempts == 2  # the 500 and the timeout; not 2xx, not in flight
    assert snap.disabled_webhook_endpoints == 1


def test_ping_answers_on_a_live_ledger_and_raises_on_a_dead_one(engine: Engine):
    with session_scope(engine, readonly=True) as session:
        ping(session)
    dead = make_engine("postgresql://postgres@127.0.0.1:1/nothing")
    with pytest.raises(LedgerUnavailableError), session_scope(dead, readonly=True) as session:
        ping(session)
