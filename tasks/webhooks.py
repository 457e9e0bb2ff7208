"""Webhook delivery: one task per attempt, on the bookkeeping queue.

Events are recorded by the ledger when a job or batch ends; whoever ended it sends their first
attempts after committing (:func:`ragq.tasks.dispatch.send_webhook_attempts`). An attempt is
claimed before it is sent, so duplicate tasks (a redelivered last step sends again) send it once;
a failed attempt schedules the next one as a new ledger row and a task with a countdown.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from celery import shared_task
from sqlalchemy.engine import Engine

from ragq.errors import WebhookSendError, WebhookUrlError
from ragq.ledger import (
    ClaimedDelivery,
    claim_delivery,
    disable_endpoint,
    record_attempt,
    schedule_attempt,
    session_scope,
)
from ragq.orchestration.webhook_retry import NextStep, next_step, retry_delay_s
from ragq.schemas.tasks import Task
from ragq.schemas.webhook import render_body
from ragq.settings import Settings
from ragq.tasks.runtime import resources, settings
from ragq.webhooks import SendOutcome, UrlPolicy, WebhookSender, pin_url
from ragq.webhooks.urls import Resolver, resolve_host

log = logging.getLogger(__name__)
DELIVER = Task.DELIVER_WEBHOOK


@dataclass(frozen=True)
class AttemptResult:
    """What one attempt came to, and when the next one is due (``delay_s``) if any."""

    step: NextStep
    status_code: int | None = None
    delay_s: float | None = None


def _send(claimed: ClaimedDelivery, sender: WebhookSender, cfg: Settings,
          resolve: Resolver) -> tuple[SendOutcome | None, str | None, bool]:
    """(answer, error, retryable): the URL is checked again here, since DNS can change, and
    the request goes to the address that was checked."""
    if claimed.disabled:
        return None, "endpoint disabled (410 Gone)", False
    if claimed.secret is None:
        return None, "endpoint has no secret", False
    try:
        pinned = pin_url(claimed.url, policy=UrlPolicy.from_settings(cfg), resolve=resolve)
        body = render_body(claimed.payload, base_url=cfg.api_base_url)
        outcome = sender.send(claimed.url, secret=claimed.secret, msg_id=claimed.webhook_id,
                              body=body, address=pinned.address)
    except WebhookUrlError as exc:
        return None, str(exc), False
    except WebhookSendError as exc:
        return None, str(exc), exc.retryable
    error = None if outcome.ok else f"HTTP {outcome.status_code}"
    return outcome, error, True


def deliver(engine: Engine, sender: WebhookSender, cfg: Settings, *, webhook_id: str,
            attempt: int, resolve: Resolver = resolve_host) -> AttemptResult | None:
    """Make attempt ``attempt`` of event ``webhook_id`` and record it; None when another task
    already made it. On a retryable failure the next attempt is recorded, due after the
    returned ``delay_s``."""
    with session_scope(engine) as session:
        claimed = claim_delivery(session, webhook_id=webhook_id, attempt=attempt,
                                 lease_s=cfg.webhook_timeout_s * 2 + 30)
    if claimed is None:
        return None
    outcome, error, retryable = _send(claimed, sender, cfg, resolve)
    code = outcome.status_code if outcome else None
    step = next_step(code, attempt=attempt, max_attempts=cfg.webhook_max_attempts,
                     retryable=retryable)
    delay = None
    with session_scope(engine) as session:
        record_attempt(session, webhook_id=webhook_id, attempt=attempt, status_code=code,
                       error=error)
        if step is NextStep.DISABLE and claimed.endpoint_id:
            disable_endpoint(session, endpoint_id=claimed.endpoint_id,
                             reason=f"410 Gone from {claimed.url} on {webhook_id}")
        if step is NextStep.RETRY:
            delay = retry_delay_s(attempt, base_s=cfg.webhook_backoff_base_s,
                                  max_s=cfg.webhook_backoff_max_s,
                                  retry_after_s=outcome.retry_after_s if outcome else None)
            schedule_attempt(session, webhook_id=webhook_id, attempt=attempt + 1,
                             delay_s=delay)
    log.info("webhook=%s attempt=%d status=%s step=%s", webhook_id, attempt, code, step)
    return AttemptResult(step, code, delay)


@shared_task(name=DELIVER, bind=True)
def deliver_webhook(self: Any, webhook_id: str, attempt: int = 1) -> str:
    """Send one attempt of one event with the process's sender; schedule the next attempt
    when it fails."""
    res = resources(self)
    result = deliver(res.engine, res.webhook_sender, settings(self), webhook_id=webhook_id,
                     attempt=attempt)
    if result is None:
        return "already_sent"
    if result.step is NextStep.RETRY and result.delay_s is not None:
        self.app.send_task(DELIVER, args=(webhook_id, attempt + 1), countdown=result.delay_s)
    return result.step.value



__all__ = ["DELIVER", "AttemptResult", "deliver", "deliver_webhook"]
