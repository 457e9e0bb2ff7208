"""Submitting, following, reading and cancelling batches and jobs: the core the CLI (and later
the HTTP API) calls."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger import (
    add_job,
    batch_errors,
    batch_jobs,
    cancel_batch,
    cancel_job,
    create_batch,
    get_batch,
    get_job,
    record_input_error,
    session_scope,
    start_batch,
)
from ledger.errors import LedgerNotFoundError
from ragq.adapters import build_ledger_engine
from ragq.errors import InputError, StackError
from ragq.settings import Settings
from schemas.statuses import TERMINAL_JOB_STATUSES, BatchStatus
from schemas.ticket import Ticket
from submission.tickets import TicketError, read_ticket_file
from workers.client import client_app
from workers.queues import Queue, task_name

ROUTE = task_name(Queue.MODELS, "route")
FINISHED_BATCH = {BatchStatus.COMPLETED, BatchStatus.CANCELLED, BatchStatus.FAILED}


@dataclass(frozen=True)
class Submitted:
    batch_id: str
    job_ids: list[str]
    errors: int


def _job_meta(ticket: Ticket) -> dict[str, Any]:
    return {"route": ticket.route,
            "budget": ticket.budget.model_dump(exclude_none=True) if ticket.budget else None,
            "ticket_metadata": ticket.metadata}


def submit_tickets(settings: Settings, parsed: Sequence[tuple[int, Ticket | TicketError]], *,
                   collection: str, source: str | None) -> Submitted:
    """Record a batch with one job per valid ticket and an error per bad line, then enqueue."""
    with session_scope(build_ledger_engine(settings)) as session:
        batch = create_batch(session, tenant=settings.tenant, collection=collection,
                             input_filename=source)
        job_ids = []
        for line, item in parsed:
            if isinstance(item, TicketError):
                record_input_error(session, batch_id=batch.id, line=line,
                                   custom_id=item.custom_id, code=item.code, message=item.message)
                continue
            job = add_job(session, batch_id=batch.id, custom_id=item.custom_id, position=line,
                          tenant=settings.tenant, collection=collection, question=item.question,
                          acl=item.acl, metadata=_job_meta(item))
            job_ids.append(job.id)
        start_batch(session, batch_id=batch.id)
        batch_id = batch.id
    _enqueue(settings, job_ids)
    return Submitted(batch_id, job_ids, sum(isinstance(i, TicketError) for _, i in parsed))


def _enqueue(settings: Settings, job_ids: Sequence[str]) -> None:
    app = client_app(settings)
    for job_id in job_ids:
        app.send_task(ROUTE, args=(job_id,))


def submit_file(settings: Settings, path: Path, *, collection: str) -> Submitted:
    """Submit a JSONL ticket file. Raises InputError when the file is missing or too big."""
    client_app(settings)  # fail before writing anything when the stack is down
    parsed = read_ticket_file(path, max_lines=settings.max_batch_lines,
                              max_bytes=settings.max_batch_bytes)
    return submit_tickets(settings, parsed, collection=collection, source=str(path))


def ask(settings: Settings, question: str, *, collection: str, acl: Sequence[str]) -> str:
    """Submit one question as a job outside any batch; returns the job id."""
    ticket = Ticket(custom_id="ask", question=question, acl=tuple(acl))
    client_app(settings)
    with session_scope(build_ledger_engine(settings)) as session:
        job_id = add_job(session, batch_id=None, custom_id=None, position=None,
                         tenant=settings.tenant, collection=collection, question=ticket.question,
                         acl=ticket.acl, metadata=_job_meta(ticket)).id
    _enqueue(settings, [job_id])
    return job_id


def describe(settings: Settings, target: str) -> dict[str, Any]:
    """Status of a batch (counts) or a job (status, route, result). Raises InputError."""
    with session_scope(build_ledger_engine(settings), readonly=True) as session:
        try:
            if target.startswith("bat_"):
                return _batch_view(get_batch(session, batch_id=target))
            job = get_job(session, job_id=target)
        except LedgerNotFoundError as exc:
            raise InputError(f"unknown id {target!r}: expected a batch (bat_…) or job (job_…) id"
                             ) from exc
        return {"id": job.id, "object": "job", "status": str(job.status), "route": job.route,
                "question": job.question, "stop_reason": job.stop_reason,
                "result": job.result, "created_at": job.created_at,
                "finished_at": job.finished_at}


def _batch_view(batch: Any) -> dict[str, Any]:
    done = (batch.completed_count + batch.insufficient_evidence_count +
            batch.budget_exhausted_count + batch.failed_count + batch.cancelled_count)
    return {
        "id": batch.id, "object": "batch", "status": str(batch.status),
        "collection": batch.collection, "input_file": batch.input_filename,
        "counts": {"total": batch.total_count, "finished": done,
                   "completed": batch.completed_count,
                   "insufficient_evidence": batch.insufficient_evidence_count,
                   "budget_exhausted": batch.budget_exhausted_count,
                   "failed": batch.failed_count, "cancelled": batch.cancelled_count,
                   "invalid": batch.invalid_count},
        "created_at": batch.created_at, "started_at": batch.started_at,
        "finished_at": batch.finished_at,
    }


def wait(settings: Settings, target: str, *, on_progress: Callable[[int, int], None] | None = None,
         timeout_s: float = 3600.0, poll_s: float = 0.5) -> dict[str, Any]:
    """Poll until a batch or job ends; returns its final description. Raises StackError on
    timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        view = describe(settings, target)
        if view["object"] == "batch":
            counts = view["counts"]
            if on_progress:
                on_progress(counts["finished"], counts["total"])
            if BatchStatus(view["status"]) in FINISHED_BATCH:
                return view
        elif view["status"] in {s.value for s in TERMINAL_JOB_STATUSES}:
            return view
        if time.monotonic() > deadline:
            raise StackError(f"{target} did not finish within {timeout_s:.0f}s; "
                             "are workers up? (`ragq status`)")
        time.sleep(poll_s)


def results(settings: Settings, batch_id: str) -> list[dict[str, Any]]:
    """One result per job of the batch, in input order; unfinished jobs show their status."""
    with session_scope(build_ledger_engine(settings), readonly=True) as session:
        get_batch(session, batch_id=batch_id)
        return [job.result or {"custom_id": job.custom_id, "job_id": job.id,
                               "status": str(job.status), "route": job.route}
                for job in batch_jobs(session, batch_id=batch_id)]


def errors(settings: Settings, batch_id: str) -> list[dict[str, Any]]:
    """The batch's rejected lines, then its failed jobs, as errors JSONL records."""
    with session_scope(build_ledger_engine(settings), readonly=True) as session:
        get_batch(session, batch_id=batch_id)
        out: list[dict[str, Any]] = [
            {"line": e.line, "custom_id": e.custom_id,
             "error": {"code": e.code, "message": e.message}}
            for e in batch_errors(session, batch_id=batch_id)
        ]
        out += [{"line": job.position, "custom_id": job.custom_id, "job_id": job.id,
                 "error": job.error or {"code": "failed"}}
                for job in batch_jobs(session, batch_id=batch_id) if job.status == "failed"]
        return out


def cancel(settings: Settings, target: str) -> int:
    """Cancel a batch's open jobs, or one job; returns how many jobs were cancelled."""
    with session_scope(build_ledger_engine(settings)) as session:
        try:
            if target.startswith("bat_"):
                return cancel_batch(session, batch_id=target)
            return int(cancel_job(session, job_id=target))
        except LedgerNotFoundError as exc:
            raise InputError(f"unknown id {target!r}") from exc
