"""The review queue for the front doors: list the jobs waiting for a human, and
resolve one with an answer or a rejection.

A reviewer sees a job as its other readers do: another tenant's job is not found. A key whose
ACL does not cover every label the job ran with does not see it either: the draft and its
evidence come from documents under those labels.
"""

from __future__ import annotations

from typing import Any

from ragq.errors import ReviewInputError
from ragq.ledger import (
    JobRow,
    Resolution,
    ReviewRow,
    get_job,
    list_reviews,
    resolve_review,
    session_scope,
)
from ragq.ledger.errors import LedgerNotFoundError
from ragq.schemas.statuses import ReviewDecision
from ragq.settings import Settings
from ragq.submission.access import Caller, not_found, require_tenant
from ragq.submission.views import job_view
from ragq.workers.client import client_app
from ragq.workers.outbox import send_pending_webhooks
from ragq.workers.resources import resources_for

MAX_ANSWER_CHARS = 100_000
"""Longest reviewer answer accepted, in characters."""
CLI_REVIEWER = "cli"
"""Who a resolution from the local CLI is recorded as."""


def _readable(job: JobRow, caller: Caller | None) -> bool:
    """Whether ``caller`` may see the job's draft: its tenant, and an ACL cap (if any) that
    covers every label the job read."""
    if caller is None:
        return True
    if job.tenant != caller.tenant:
        return False
    return caller.acl_cap is None or set(job.acl or []) <= set(caller.acl_cap)


def review_item(review: ReviewRow, job: JobRow) -> dict[str, Any]:
    """One queued job as the front doors list it: ticket, draft, evidence, reasons."""
    result = job.result or {}
    resolved = None
    if review.resolved_at is not None:
        resolved = {"decision": str(review.decision), "reviewer": review.reviewer,
                    "at": review.resolved_at.isoformat(), "note": review.note}
    draft = (result.get("reviewed") or {}).get("draft_answer", result.get("answer"))
    return {"job_id": job.id, "batch_id": job.batch_id, "custom_id": job.custom_id,
            "status": str(job.status), "question": job.question, "route": job.route,
            "reasons": list(review.reasons), "outcome": str(review.outcome),
            "draft_answer": draft, "citations": result.get("citations") or [],
            "contradictions": result.get("contradictions") or [],
            "evidence_doc_ids": result.get("evidence_doc_ids") or [],
            "queued_at": review.created_at, "resolved": resolved}


def review_queue(settings: Settings, *, caller: Caller | None = None, pending: bool = True,
                 limit: int = 100) -> list[dict[str, Any]]:
    """The caller's escalated jobs, oldest first: those waiting (``pending``), else all of
    them with their resolutions. ``caller`` None: every tenant's (an operator at the CLI)."""
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        rows = list_reviews(session, tenant=caller.tenant if caller else None, pending=pending,
                            limit=limit if caller is None or caller.acl_cap is None else 10_000)
        return [review_item(r, j) for r, j in rows if _readable(j, caller)][:limit]


def resolution_of(*, answer: str | None, reject: bool, note: str | None, reviewer: str
                  ) -> Resolution:
    """A reviewer's input as a resolution. Raises ReviewInputError unless exactly one of an
    answer (not blank, at most :data:`MAX_ANSWER_CHARS`) and a rejection is given."""
    if reject == (answer is not None):
        raise ReviewInputError("give either an answer or a rejection, not both and not neither "
                               "(CLI: --answer FILE | --reject; HTTP: {\"answer\": …} | "
                               "{\"reject\": true})")
    if answer is not None:
        if not answer.strip():
            raise ReviewInputError("the answer is empty: write the answer to send, or reject")
        if len(answer) > MAX_ANSWER_CHARS:
            raise ReviewInputError(f"the answer is {len(answer)} characters, over the limit "
                                   f"of {MAX_ANSWER_CHARS}")
        return Resolution(ReviewDecision.ANSWERED, reviewer, answer.strip(), note)
    return Resolution(ReviewDecision.REJECTED, reviewer, None, note)


def resolve(settings: Settings, job_id: str, resolution: Resolution, *,
            caller: Caller | None = None) -> dict[str, Any]:
    """Resolve a job waiting for review; returns the job as :func:`describe` shows it. Raises
    NotFoundError (unknown, another tenant's, outside the key's ACL), NotAwaitingReviewError
    (not in the queue), StackError when the stack is down (before anything is written: the
    ``job.reviewed`` event, enqueued after the commit, would otherwise be lost)."""
    app = client_app(settings)
    with session_scope(resources_for(settings).engine) as session:
        try:
            job = get_job(session, job_id=job_id)
            require_tenant(job, caller, kind="job", key=job_id)
            if not _readable(job, caller):
                raise LedgerNotFoundError(f"no job {job_id!r}", table="jobs", key=job_id)
            job = resolve_review(session, job_id=job_id, resolution=resolution)
        except LedgerNotFoundError as exc:
            raise not_found(exc, "job", job_id) from exc
        view = job_view(job)
    send_pending_webhooks(app, resources_for(settings).engine, job_ids=[job_id])
    return view
