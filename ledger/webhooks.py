"""Webhook endpoints, events and delivery attempts.

An event is recorded as its first attempt row in the same transaction that ends the job or batch,
so it exists exactly when the ending does; its ``webhook_id`` is derived from the event, and the
(webhook_id, attempt) unique constraint stops a second recording. An attempt row is claimed by a
conditional update before it is sent, so duplicate delivery tasks send it once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ragq.ledger.db import race_guard, rows_changed
from ragq.ledger.models import BatchRow, JobRow, WebhookDeliveryRow, WebhookEndpointRow, utcnow
from ragq.schemas.statuses import BatchStatus, JobStatus
from ragq.schemas.webhook import (
    BATCH_EVENT,
    BatchEventCounts,
    WebhookEvent,
    batch_event,
    job_event,
    reviewed_event,
)

__all__ = [
    "ClaimedDelivery",
    "claim_delivery",
    "disable_endpoint",
    "ensure_endpoint",
    "first_attempts",
    "record_attempt",
    "record_batch_event",
    "record_job_event",
    "record_reviewed_event",
    "schedule_attempt",
]

SENDING = "sending"
"""``error`` of a claimed attempt until its answer is recorded."""


def ensure_endpoint(session: Session, *, tenant: str, url: str,
                    new_secret: Callable[[], str]) -> WebhookEndpointRow:
    """The tenant's endpoint for ``url``, created with a fresh secret on first use. Naming a
    disabled endpoint again in a submission enables it again."""
    row = session.scalar(select(WebhookEndpointRow).where(
        WebhookEndpointRow.tenant == tenant, WebhookEndpointRow.url == url))
    if row is None:
        row = WebhookEndpointRow(tenant=tenant, url=url, secret=new_secret())
        session.add(row)
        session.flush()
    elif row.disabled_at is not None:
        row.disabled_at, row.disabled_reason = None, None
    return row


def _record_event(session: Session, *, tenant: str, url: str, event: WebhookEvent,
                  batch_id: str | None, job_id: str | None) -> str | None:
    webhook_id = event.webhook_id
    exists = session.scalar(select(WebhookDeliveryRow.id)
                            .where(WebhookDeliveryRow.webhook_id == webhook_id))
    if exists:
        return None
    endpoint_id = session.scalar(select(WebhookEndpointRow.id).where(
        WebhookEndpointRow.tenant == tenant, WebhookEndpointRow.url == url))
    try:
        with race_guard(session):
            session.add(WebhookDeliveryRow(
                webhook_id=webhook_id, endpoint_id=endpoint_id, batch_id=batch_id, job_id=job_id,
                event_type=event.type, url=url, payload=event.model_dump(mode="json"),
                attempt=1, next_attempt_at=event.timestamp))
    except IntegrityError:
        return None  # recorded by a concurrent ending of the same entity
    return webhook_id


def _review_url(session: Session, job: JobRow) -> str | None:
    """Where a job's review events go: its own webhook, else its batch's (a helpdesk that
    hears about a batch hears about its tickets that wait for a human)."""
    url = (job.meta or {}).get("webhook_url")
    if url or job.batch_id is None:
        return url
    return session.scalar(select(BatchRow.webhook_url).where(BatchRow.id == job.batch_id))


def record_job_event(session: Session, *, job: JobRow) -> str | None:
    """Record a job's ending for its webhook (if the job has one; ``job.needs_review`` also
    goes to its batch's); returns the webhook id. The payload is
    :func:`schemas.webhook.job_event`'s, validated."""
    status = JobStatus(job.status)
    url = (_review_url(session, job) if status == JobStatus.NEEDS_REVIEW
           else (job.meta or {}).get("webhook_url"))
    if not url:
        return None
    event = job_event(job_id=job.id, batch_id=job.batch_id, custom_id=job.custom_id,
                      status=status, stop_reason=job.stop_reason, at=utcnow())
    return _record_event(session, tenant=job.tenant, url=url, event=event,
                         batch_id=job.batch_id, job_id=job.id)


def record_reviewed_event(session: Session, *, job: JobRow) -> str | None:
    """Record a reviewer's resolution of ``job`` (now ``completed`` or ``rejected``) as a
    ``job.reviewed`` event, to the same webhook as its ``job.needs_review``; returns the
    webhook id."""
    url = _review_url(session, job)
    if not url:
        return None
    event = reviewed_event(job_id=job.id, batch_id=job.batch_id, custom_id=job.custom_id,
                           status=JobStatus(job.status), stop_reason=job.stop_reason,
                           at=utcnow())
    return _record_event(session, tenant=job.tenant, url=url, event=event,
                         batch_id=job.batch_id, job_id=job.id)


def record_batch_event(session: Session, *, batch: BatchRow) -> str | None:
    """Record a batch's ending for its webhook (if it has one and has finished); returns the
    webhook id. The payload is :func:`schemas.webhook.batch_event`'s, validated."""
    status = BatchStatus(batch.status)
    if not batch.webhook_url or status not in BATCH_EVENT:
        return None
    counts = BatchEventCounts(
        total=batch.total_count, completed=batch.completed_count,
        insufficient_evidence=batch.insufficient_evidence_count,
        budget_exhausted=batch.budget_exhausted_count,
        needs_review=batch.needs_review_count, rejected=batch.rejected_count,
        failed=batch.failed_count,
        cancelled=batch.cancelled_count, invalid=batch.invalid_count)
    event = batch_event(batch_id=batch.id, status=status, counts=counts, at=utcnow())
    return _record_event(session, tenant=batch.tenant, url=batch.webhook_url, event=event,
                         batch_id=batch.id, job_id=None)


def first_attempts(session: Session, *, job_ids: Sequence[str] = (),
                   batch_id: str | None = None) -> list[str]:
    """Webhook ids of unsent first attempts: the events of ``job_ids`` and the batch event of
    ``batch_id``."""
    conditions: list[Any] = []
    if job_ids:
        conditions.append(WebhookDeliveryRow.job_id.in_(list(job_ids)))
    if batch_id:
        conditions.append(and_(WebhookDeliveryRow.batch_id == batch_id,
                               WebhookDeliveryRow.job_id.is_(None)))
    if not conditions:
        return []
    return list(session.scalars(select(WebhookDeliveryRow.webhook_id).where(
        or_(*conditions), WebhookDeliveryRow.attempt == 1,
        WebhookDeliveryRow.status_code.is_(None), WebhookDeliveryRow.error.is_(None))))


@dataclass(frozen=True)
class ClaimedDelivery:
    """An attempt this caller now owns: where to send what, signed with which secret."""

    webhook_id: str
    attempt: int
    url: str
    payload: dict[str, Any]
    endpoint_id: str | None
    secret: str | None
    disabled: bool


def claim_delivery(session: Session, *, webhook_id: str, attempt: int,
                   lease_s: float = 60.0) -> ClaimedDelivery | None:
    """Take an unsent attempt for sending, for ``lease_s`` seconds; None when it was sent or
    is being sent. A claim whose lease ran out belongs to a sender that died mid-send (its
    worker was killed): the redelivered task takes it over, so the event is not lost (the
    receiver may see it twice, under one ``webhook-id``)."""
    now = utcnow()
    unsent = WebhookDeliveryRow.error.is_(None) | (
        (WebhookDeliveryRow.error == SENDING) & (WebhookDeliveryRow.next_attempt_at < now))
    taken = rows_changed(session.execute(update(WebhookDeliveryRow).where(
        WebhookDeliveryRow.webhook_id == webhook_id, WebhookDeliveryRow.attempt == attempt,
        WebhookDeliveryRow.status_code.is_(None), unsent,
    ).values(error=SENDING, next_attempt_at=now + timedelta(seconds=lease_s))))
    if not taken:
        return None
    row = session.scalars(select(WebhookDeliveryRow).where(
        WebhookDeliveryRow.webhook_id == webhook_id, WebhookDeliveryRow.attempt == attempt)).one()
    endpoint = session.get(WebhookEndpointRow, row.endpoint_id) if row.endpoint_id else None
    return ClaimedDelivery(webhook_id, attempt, row.url, dict(row.payload), row.endpoint_id,
                           endpoint.secret if endpoint else None,
                           bool(endpoint and endpoint.disabled_at))


def record_attempt(session: Session, *, webhook_id: str, attempt: int, status_code: int | None,
                   error: str | None) -> None:
    """The answer to a claimed attempt (``error`` None when the receiver answered 2xx)."""
    session.execute(update(WebhookDeliveryRow).where(
        WebhookDeliveryRow.webhook_id == webhook_id, WebhookDeliveryRow.attempt == attempt,
    ).values(status_code=status_code, error=error))


def schedule_attempt(session: Session, *, webhook_id: str, attempt: int, delay_s: float) -> None:
    """Record attempt ``attempt`` of an event, due ``delay_s`` seconds from now, with the first
    attempt's body."""
    at = utcnow() + timedelta(seconds=delay_s)
    first = session.scalars(select(WebhookDeliveryRow).where(
        WebhookDeliveryRow.webhook_id == webhook_id, WebhookDeliveryRow.attempt == 1)).one()
    session.add(WebhookDeliveryRow(
        webhook_id=webhook_id, endpoint_id=first.endpoint_id, batch_id=first.batch_id,
        job_id=first.job_id, event_type=first.event_type, url=first.url, payload=first.payload,
        attempt=attempt, next_attempt_at=at))


def disable_endpoint(session: Session, *, endpoint_id: str, reason: str) -> None:
    """Stop sending to an endpoint (its receiver answered 410 Gone)."""
    session.execute(update(WebhookEndpointRow).where(WebhookEndpointRow.id == endpoint_id)
                    .values(disabled_at=utcnow(), disabled_reason=reason))
