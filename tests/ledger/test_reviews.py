"""The review queue in the ledger, on both backends: a job waiting for review has ended for its
batch; exactly one resolution wins, moving the batch's counters and rewriting the result."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from ragq.errors import NotAwaitingReviewError
from ragq.ledger import (
    Resolution,
    add_job,
    create_batch,
    get_batch,
    get_job,
    list_reviews,
    resolve_review,
    session_scope,
    start_batch,
)
from ragq.ledger.jobs import finish_job
from ragq.ledger.reviews import queue_review
from ragq.schemas.statuses import JobStatus, ReviewDecision
from tests.ledger.conftest import Race


def waiting_batch(engine: Engine, n: int = 1) -> tuple[str, list[str]]:
    """A batch whose ``n`` jobs all ended needs_review."""
    with session_scope(engine) as session:
        batch = create_batch(session, tenant="t", collection="c", input_filename=None)
        jobs = [add_job(session, batch_id=batch.id, custom_id=f"c{i}", position=i, tenant="t",
                        collection="c", question="Why?", acl=["public"]).id for i in range(n)]
        start_batch(session, batch_id=batch.id)
        for job_id in jobs:
            finish_job(session, job_id=job_id, status=JobStatus.NEEDS_REVIEW,
                       result={"status": "needs_review", "answer": "draft"})
            queue_review(session, job_id=job_id, tenant="t", reasons=["route:escalate"],
                         outcome=JobStatus.COMPLETED)
        return batch.id, jobs


def test_waiting_jobs_end_their_batch_and_are_listed(engine: Engine) -> None:
    batch_id, jobs = waiting_batch(engine, 2)
    with session_scope(engine, readonly=True) as session:
        batch = get_batch(session, batch_id=batch_id)
        assert (str(batch.status), batch.needs_review_count) == ("completed", 2)
        listed = list_reviews(session, tenant="t")
        assert [job.id for _, job in listed] == jobs
        assert list_reviews(session, tenant="other") == []


def test_exactly_one_of_two_racing_reviewers_resolves_a_job(engine: Engine, race: Race) -> None:
    batch_id, (job_id,) = waiting_batch(engine)

    def review(i: int) -> str:
        decision = ReviewDecision.ANSWERED if i == 0 else ReviewDecision.REJECTED
        try:
            with session_scope(engine) as session:
                resolve_review(session, job_id=job_id, resolution=Resolution(
                    decision, f"key_{i}", answer="Final." if i == 0 else None))
            return "resolved"
        except NotAwaitingReviewError:
            return "refused"

    assert sorted(race(2, review)) == ["refused", "resolved"]
    with session_scope(engine, readonly=True) as session:
        batch = get_batch(session, batch_id=batch_id)
        job = get_job(session, job_id=job_id)
        counts = (batch.needs_review_count, batch.completed_count, batch.rejected_count)
        assert counts in {(0, 1, 0), (0, 0, 1)}
        assert job.result is not None and job.result["status"] == str(job.status)
        assert job.result["reviewed"]["draft_answer"] == "draft"
        assert list_reviews(session, tenant="t") == []


def test_a_job_never_escalated_cannot_be_resolved(engine: Engine) -> None:
    with session_scope(engine) as session:
        job_id = add_job(session, batch_id=None, custom_id=None, position=None, tenant="t",
                         collection="c", question="q", acl=["public"]).id
        finish_job(session, job_id=job_id, status=JobStatus.COMPLETED, result={})
    with pytest.raises(NotAwaitingReviewError) as caught, session_scope(engine) as session:
        resolve_review(session, job_id=job_id, resolution=Resolution(
            ReviewDecision.REJECTED, "cli"))
    assert (caught.value.job_id, caught.value.status) == (job_id, "completed")
