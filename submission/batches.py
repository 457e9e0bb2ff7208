"""Submitting, waiting for and cancelling batches and jobs: the core the CLI and the HTTP API
call. Reading them back lives in :mod:`submission.views`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ragq.errors import InputError, StackError
from ragq.ledger import (
    add_job,
    batch_jobs,
    cancel_batch,
    cancel_job,
    collection_holds_documents,
    create_batch,
    ensure_endpoint,
    get_batch,
    get_job,
    record_input_error,
    session_scope,
    source_names,
    sources_holding_documents,
    start_batch,
)
from ragq.ledger.errors import LedgerNotFoundError
from ragq.orchestration.batches import FINISHED_BATCH_STATUSES
from ragq.schemas.statuses import TERMINAL_JOB_STATUSES, BatchStatus
from ragq.schemas.ticket import Priority, SourceSelection, Ticket
from ragq.settings import Settings
from ragq.submission.access import (
    Caller,
    capped_acl,
    not_found,
    require_readable,
)
from ragq.submission.sources import (
    Scope,
    SourceSelectionError,
    TenantSources,
    UnknownCollectionError,
    expand,
    job_scope,
)
from ragq.submission.tickets import (
    Limits,
    TicketError,
    check_collection,
    read_ticket_file,
    read_tickets,
    refusal,
    ticket_or_refusal,
)
from ragq.submission.views import describe
from ragq.webhooks import UrlPolicy, check_url, new_secret
from ragq.workers.client import client_app
from ragq.workers.outbox import send_pending_webhooks
from ragq.workers.resources import resources_for
from ragq.workers.waiting import start_waiting_jobs

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

Parsed = Sequence[tuple[int, Ticket | TicketError]]


@dataclass(frozen=True)
class Submitted:
    batch_id: str
    job_ids: list[str]
    errors: int
    webhook_secret: str | None = None


@dataclass(frozen=True)
class BatchOptions:
    """What a whole batch may carry besides its tickets."""

    webhook_url: str | None = None
    budget: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    sources: SourceSelection | None = None  # restricts every ticket's sources
    priority: Priority = Priority.BULK  # of every ticket that names none


def limits_of(settings: Settings) -> Limits:
    """The submission limits the settings set."""
    return Limits(settings.max_batch_lines, settings.max_batch_bytes, settings.max_question_chars)


def caller_of(settings: Settings) -> Caller:
    """The local CLI's identity: the configured tenant, no ACL cap."""
    return Caller(settings.tenant)


def job_metadata(ticket: Ticket, budget: dict[str, Any] | None = None,
                 sources: Sequence[str] | None = None) -> dict[str, Any]:
    """What a job keeps of its ticket besides question and ACL (route, budget, the ticket's
    metadata, webhook URL, sources): the flow reads these keys."""
    own = ticket.budget.model_dump(exclude_none=True) if ticket.budget else None
    meta: dict[str, Any] = {"route": ticket.route, "budget": own or budget,
                            "ticket_metadata": ticket.metadata}
    if ticket.webhook_url:
        meta["webhook_url"] = ticket.webhook_url
    if sources:
        meta["sources"] = list(sources)
    return meta


def webhook_secret(session: Session, settings: Settings, *, tenant: str, url: str) -> str:
    """The signing secret of the tenant's endpoint for ``url`` (created on first use). Raises
    WebhookUrlError when the URL is refused (scheme, or a host that is not global)."""
    check_url(url, policy=UrlPolicy.from_settings(settings))
    return ensure_endpoint(session, tenant=tenant, url=url, new_secret=new_secret).secret


@dataclass(frozen=True)
class Door:
    """What every ticket of one submission is admitted against: who submits, the collection
    they named (None: none), the batch's sources, and the tenant's sources."""

    caller: Caller
    named: str | None
    batch_sources: tuple[str, ...] | None
    tenant: TenantSources


def _door(session: Session, caller: Caller, named: str | None,
          batch_sources: tuple[str, ...] | None = None) -> Door:
    return Door(caller, named, batch_sources, TenantSources(
        tuple(source_names(session, tenant=caller.tenant)),
        tuple(sources_holding_documents(session, tenant=caller.tenant)),
        named is not None and collection_holds_documents(session, collection=named)))


Admitted = tuple[tuple[str, ...], Scope]


def _admit(session: Session, settings: Settings, door: Door, line: int, ticket: Ticket
           ) -> Admitted | TicketError:
    """The ticket's ACL and where its job searches, or why it is refused (the same checks,
    in the same order, on every path)."""
    acl = capped_acl(ticket, door.caller, line)
    if isinstance(acl, TicketError):
        return acl
    try:
        scope = job_scope(ticket.sources, door.batch_sources, named=door.named,
                          default=settings.collection, tenant=door.tenant)
    except SourceSelectionError as exc:
        return TicketError(line, ticket.custom_id, "invalid_sources", str(exc))
    except UnknownCollectionError as exc:
        return TicketError(line, ticket.custom_id, "unknown_collection", str(exc))
    if ticket.webhook_url:
        from ragq.errors import WebhookUrlError

        try:
            webhook_secret(session, settings, tenant=door.caller.tenant, url=ticket.webhook_url)
        except WebhookUrlError as exc:
            return TicketError(line, ticket.custom_id, "invalid_webhook_url", str(exc))
    return acl, scope


def _add_job(session: Session, door: Door, ticket: Ticket, admitted: Admitted, *,
             batch_id: str | None, line: int | None, priority: Priority,
             custom_id: bool = True, budget: dict[str, Any] | None = None) -> str:
    """The job of an admitted ticket; ``priority``: the path's default, when the ticket
    names none (a batch's, or interactive for a single job)."""
    acl, scope = admitted
    return add_job(session, batch_id=batch_id, position=line,
                   custom_id=ticket.custom_id if custom_id else None,
                   tenant=door.caller.tenant, collection=scope.collection,
                   question=ticket.question, acl=acl,
                   metadata=job_metadata(ticket, budget, scope.sources),
                   priority=ticket.priority or priority).id


def submit_tickets(settings: Settings, parsed: Parsed, *, collection: str | None,
                   source: str | None, caller: Caller | None = None,
                   options: BatchOptions | None = None) -> Submitted:
    """Record a batch with one job per valid ticket and an error per bad line, then enqueue.
    ``collection`` None: none was named (see :mod:`ragq.submission.sources`). Raises
    WebhookUrlError (nothing recorded) when the batch's webhook URL is refused, and InputError
    when ``collection`` is no valid collection name or the batch's sources are bad."""
    if collection is not None:
        check_collection(collection)
    if not parsed:
        raise InputError("no ticket: the input is empty (one JSON ticket per line expected)",
                         source=source)
    caller, options = caller or caller_of(settings), options or BatchOptions()
    secret = None
    with session_scope(resources_for(settings).engine) as session:
        door = _door(session, caller, collection)
        try:
            door = replace(door, batch_sources=expand(options.sources, door.tenant.registered,
                                                      where="batch"))
        except SourceSelectionError as exc:
            raise InputError(str(exc)) from exc
        if options.webhook_url:
            secret = webhook_secret(session, settings, tenant=caller.tenant,
                                    url=options.webhook_url)
        batch = create_batch(session, tenant=caller.tenant,
                             collection=collection or settings.collection,
                             input_filename=source, budget=options.budget,
                             metadata=options.metadata, webhook_url=options.webhook_url,
                             webhook_secret=secret)
        job_ids, errors = _add_jobs(session, settings, door, batch.id, parsed, options)
        start_batch(session, batch_id=batch.id)
        batch_id = batch.id
    _start_waiting(settings)
    if not job_ids:
        _send_webhooks(settings, [], batch_id)
    return Submitted(batch_id, job_ids, errors, secret)


def _add_jobs(session: Session, settings: Settings, door: Door, batch_id: str,
              parsed: Parsed, options: BatchOptions) -> tuple[list[str], int]:
    job_ids, errors = [], 0
    for line, item in parsed:
        admitted = item if isinstance(item, TicketError) else _admit(
            session, settings, door, line, item)
        if isinstance(admitted, TicketError):
            record_input_error(session, batch_id=batch_id, line=line,
                               custom_id=admitted.custom_id, code=admitted.code,
                               message=admitted.message)
            errors += 1
            continue
        assert isinstance(item, Ticket)
        job_ids.append(_add_job(session, door, item, admitted, batch_id=batch_id, line=line,
                                priority=options.priority, budget=options.budget))
    return job_ids, errors


def _start_waiting(settings: Settings) -> None:
    """Send what the window of open jobs has room for, by fair share: this submission's jobs
    now, or as places free (each ending starts the next)."""
    start_waiting_jobs(client_app(settings), resources_for(settings).engine, settings)


def _send_webhooks(settings: Settings, job_ids: Sequence[str], batch_id: str | None) -> None:
    """Enqueue the events a front-door action ended (a cancel, an all-invalid batch)."""
    send_pending_webhooks(client_app(settings), resources_for(settings).engine, job_ids=job_ids,
                          batch_id=batch_id)


def submit_file(settings: Settings, path: Path, *, collection: str | None,
                options: BatchOptions | None = None) -> Submitted:
    """Submit a JSONL ticket file. Raises InputError when the file is missing and
    LimitExceededError when it is over a limit."""
    # The file first: a missing or oversized file is the user's first problem to fix, even
    # with the stack down; then fail before writing anything when the stack is down.
    if collection is not None:
        check_collection(collection, source="--collection")
    parsed = read_ticket_file(path, max_lines=settings.max_batch_lines,
                              max_bytes=settings.max_batch_bytes,
                              max_question_chars=settings.max_question_chars)
    client_app(settings)
    return submit_tickets(settings, parsed, collection=collection, source=str(path),
                          options=options)


def submit_stream(settings: Settings, stream: IO[str], *, collection: str | None, source: str,
                  caller: Caller, options: BatchOptions) -> Submitted:
    """Submit a JSONL stream (an upload spooled to disk), parsed line by line. Raises
    LimitExceededError when it passes a limit, before anything is recorded."""
    if collection is not None:
        check_collection(collection)
    client_app(settings)
    parsed = read_tickets(stream, limits=limits_of(settings), source=source)
    return submit_tickets(settings, parsed, collection=collection, source=source, caller=caller,
                          options=options)


@dataclass(frozen=True)
class SubmittedJob:
    job_id: str
    webhook_secret: str | None = None


def submit_job(settings: Settings, ticket: Ticket, *, collection: str | None,
               caller: Caller | None = None, custom_id: bool = True) -> SubmittedJob:
    """Submit one ticket as a job outside any batch, admitted as a batch's ticket is, and
    interactive unless the ticket says ``"priority": "bulk"`` (someone waits on it). Raises
    TicketRefusedError with the code its errors-file line would carry (``acl_not_allowed``,
    ``invalid_sources``, ``unknown_collection``, ``invalid_webhook_url``)."""
    if collection is not None:
        check_collection(collection)
    caller = caller or caller_of(settings)
    client_app(settings)
    secret = None
    with session_scope(resources_for(settings).engine) as session:
        door = _door(session, caller, collection)
        admitted = _admit(session, settings, door, 1, ticket)
        if isinstance(admitted, TicketError):
            raise refusal(admitted)
        if ticket.webhook_url:
            secret = webhook_secret(session, settings, tenant=caller.tenant,
                                    url=ticket.webhook_url)
        job_id = _add_job(session, door, ticket, admitted, batch_id=None, line=None,
                          priority=Priority.INTERACTIVE, custom_id=custom_id)
    _start_waiting(settings)
    return SubmittedJob(job_id, secret)


def ask(settings: Settings, fields: dict[str, Any], *, collection: str | None) -> str:
    """Submit one question, given as ticket fields (``ragq ask``'s options), as a job outside
    any batch; returns the job id. The fields are read by the one ticket parser; a missing
    ``custom_id`` becomes ``ask-<UTC time>`` so the result can be matched like a ticket's.
    Raises TicketRefusedError (its code) for a refused ticket, InputError for a bad
    collection name."""
    if collection is not None:
        check_collection(collection, source="--collection")
    fields = {"custom_id": time.strftime("ask-%Y%m%dT%H%M%SZ", time.gmtime())} | {
        k: v for k, v in fields.items() if v is not None}
    ticket = ticket_or_refusal(fields, max_question_chars=settings.max_question_chars)
    return submit_job(settings, ticket, collection=collection).job_id


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
            if BatchStatus(view["status"]) in FINISHED_BATCH_STATUSES:
                return view
        elif view["status"] in {s.value for s in TERMINAL_JOB_STATUSES}:
            return view
        if time.monotonic() > deadline:
            raise StackError(f"{target} did not finish within {timeout_s:.0f}s; "
                             "are workers up? (`ragq status`)")
        time.sleep(poll_s)


def cancel(settings: Settings, target: str, *, caller: Caller | None = None) -> int:
    """Cancel a batch's open jobs, or one job; returns how many jobs were cancelled. Running
    jobs stop at their next step; finished results are kept. Raises NotFoundError."""
    kind = "batch" if target.startswith("bat_") else "job"
    with session_scope(resources_for(settings).engine) as session:
        try:
            row = (get_batch(session, batch_id=target) if kind == "batch"
                   else get_job(session, job_id=target))
            require_readable(row, caller, kind=kind, key=target)
            if kind == "batch":
                count = cancel_batch(session, batch_id=target)
                job_ids = [j.id for j in batch_jobs(session, batch_id=target)]
                batch_id: str | None = target
            else:
                count = int(cancel_job(session, job_id=target))
                job_ids, batch_id = [target], getattr(row, "batch_id", None)
        except LedgerNotFoundError as exc:
            raise not_found(exc, kind, target) from exc
    _send_webhooks(settings, job_ids, batch_id)
    if count:
        _start_waiting(settings)
    return count
