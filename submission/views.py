"""Reading batches and jobs back for the front doors: status, lists, results, errors, evidence
and the ledger trail of a job. Every reader takes an optional :class:`Caller`; another tenant's
batch or job is reported as not found."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragq.errors import NotFoundError
from ragq.ledger import (
    BatchRow,
    JobRow,
    batch_cost,
    batch_errors,
    batch_jobs,
    evidence_records,
    get_batch,
    get_job,
    job_trail,
    list_batches,
    list_sources,
    session_scope,
    source_schema,
)
from ragq.ledger.errors import LedgerNotFoundError
from ragq.settings import Settings
from ragq.submission.access import Caller, acl_within, not_found, require_readable, require_tenant
from ragq.workers.resources import resources_for

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def _batch(session: Session, batch_id: str, caller: Caller | None) -> BatchRow:
    try:
        batch = get_batch(session, batch_id=batch_id)
    except LedgerNotFoundError as exc:
        raise not_found(exc, "batch", batch_id) from exc
    require_tenant(batch, caller, kind="batch", key=batch_id)
    return batch


def _job(session: Session, job_id: str, caller: Caller | None) -> JobRow:
    try:
        job = get_job(session, job_id=job_id)
    except LedgerNotFoundError as exc:
        raise not_found(exc, "job", job_id) from exc
    require_readable(job, caller, kind="job", key=job_id)
    return job


def batch_view(batch: BatchRow, cost_usd: float | None = None) -> dict[str, Any]:
    """A batch as the front doors show it (status, counts, timestamps, cost so far)."""
    done = (batch.completed_count + batch.insufficient_evidence_count +
            batch.budget_exhausted_count + batch.needs_review_count + batch.rejected_count +
            batch.failed_count + batch.cancelled_count)
    return {
        "id": batch.id, "object": "batch", "status": str(batch.status),
        "collection": batch.collection, "input_file": batch.input_filename,
        "counts": {"total": batch.total_count, "finished": done,
                   "completed": batch.completed_count,
                   "insufficient_evidence": batch.insufficient_evidence_count,
                   "budget_exhausted": batch.budget_exhausted_count,
                   "needs_review": batch.needs_review_count,
                   "rejected": batch.rejected_count,
                   "failed": batch.failed_count, "cancelled": batch.cancelled_count,
                   "invalid": batch.invalid_count},
        "cost_usd": cost_usd, "webhook_url": batch.webhook_url, "metadata": batch.meta,
        "created_at": batch.created_at, "started_at": batch.started_at,
        "finished_at": batch.finished_at,
    }


def job_view(job: JobRow) -> dict[str, Any]:
    """A job as the front doors show it (status, route, result when finished)."""
    return {"id": job.id, "object": "job", "batch_id": job.batch_id, "custom_id": job.custom_id,
            "status": str(job.status), "route": job.route, "priority": job.priority,
            "question": job.question,
            "stop_reason": job.stop_reason, "result": job.result, "created_at": job.created_at,
            "started_at": job.started_at, "finished_at": job.finished_at}


def describe(settings: Settings, target: str, *, caller: Caller | None = None
             ) -> dict[str, Any]:
    """Status of a batch (counts, cost so far) or a job (status, route, result). Raises
    NotFoundError for an unknown id or another tenant's."""
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        if target.startswith("bat_"):
            return batch_view(_batch(session, target, caller),
                              batch_cost(session, batch_id=target))
        return job_view(_job(session, target, caller))


def list_batch_views(settings: Settings, *, caller: Caller, limit: int, after: str | None
                     ) -> list[dict[str, Any]]:
    """The caller's batches, newest first, ``limit`` after the cursor ``after`` (a batch id),
    each with its cost so far, as :func:`describe` shows it (one sum per batch of the page)."""
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        return [batch_view(b, batch_cost(session, batch_id=b.id))
                for b in list_batches(session, tenant=caller.tenant, limit=limit, after=after)]


def _hidden(job: JobRow) -> dict[str, Any]:
    return {"custom_id": job.custom_id, "job_id": job.id, "status": str(job.status),
            "error": {"code": "acl_not_allowed",
                      "message": "this job ran with ACL labels your API key may not read"}}


def results(settings: Settings, batch_id: str, *, caller: Caller | None = None
            ) -> list[dict[str, Any]]:
    """One result per job of the batch, in input order; unfinished jobs show their status. A
    job whose ACL is not within the caller's shows its id and status only."""
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        _batch(session, batch_id, caller)
        return [(job.result or {"custom_id": job.custom_id, "job_id": job.id,
                                "status": str(job.status), "route": job.route})
                if acl_within(job.acl, caller) else _hidden(job)
                for job in batch_jobs(session, batch_id=batch_id)]


def errors(settings: Settings, batch_id: str, *, caller: Caller | None = None
           ) -> list[dict[str, Any]]:
    """The batch's rejected lines, then its failed jobs, as errors JSONL records."""
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        _batch(session, batch_id, caller)
        out: list[dict[str, Any]] = [
            {"line": e.line, "custom_id": e.custom_id,
             "error": {"code": e.code, "message": e.message}}
            for e in batch_errors(session, batch_id=batch_id)
        ]
        out += [{"line": job.position, "custom_id": job.custom_id, "job_id": job.id,
                 "error": (job.error or {"code": "failed"}) if acl_within(job.acl, caller)
                 else _hidden(job)["error"]}
                for job in batch_jobs(session, batch_id=batch_id) if job.status == "failed"]
        return out


def evidence(settings: Settings, job_id: str, *, caller: Caller | None = None
             ) -> list[dict[str, Any]]:
    """Every evidence item the job retrieved: document, chunk, score, version, sub-query, and
    whether it reached the answer model."""
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        _job(session, job_id, caller)
        return evidence_records(session, job_id=job_id)


def trail(settings: Settings, job_id: str, *, caller: Caller | None = None) -> dict[str, Any]:
    """The job's ledger: every plan, sub-query, retrieval, check, verification, model call,
    budget charge, answer and webhook delivery, oldest first, by table."""
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        job = _job(session, job_id, caller)
        return {"job": job_view(job), **job_trail(session, job_id=job_id)}


def source_detail(settings: Settings, *, caller: Caller, name: str) -> dict[str, Any]:
    """One of the caller's tenant's sources with its metadata schema (``fields``: empty when
    none is declared). Raises NotFoundError for a source the tenant does not have."""
    for source in source_list(settings, caller=caller):
        if source["name"] == name:
            with session_scope(resources_for(settings).engine) as session:
                schema = source_schema(session, tenant=caller.tenant, name=name) or {}
            return {**source, "metadata_schema": {"fields": schema.get("fields", [])}}
    raise NotFoundError(f"no source {name!r}; see `ragq sources list`", kind="source", key=name)


def source_list(settings: Settings, *, caller: Caller) -> list[dict[str, Any]]:
    """The caller's tenant's sources, by name: description, documents, past hits."""
    with session_scope(resources_for(settings).engine) as session:
        return [{"name": v.name, "description": v.description, "documents": v.documents,
                 "hits": v.hits} for v in list_sources(session, tenant=caller.tenant)]
