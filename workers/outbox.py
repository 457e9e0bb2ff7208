"""The webhook outbox: the one place that finds events whose first attempt is still unsent and
hands each to the delivery task (through :func:`ragq.tasks.dispatch.send_webhook_attempts`, as the
flow's own endings are).

The ledger records an event as its first attempt row in the transaction that ends the job or
batch, so the event exists exactly when the ending does. A front door that ended something (a
cancel, an all-invalid batch) calls :func:`send_pending_webhooks` after that transaction
committed. Calling it twice is harmless: delivery claims an attempt before sending it, so a
duplicate task finds it taken and sends nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragq.ledger import first_attempts, session_scope
from ragq.tasks.dispatch import send_webhook_attempts

if TYPE_CHECKING:
    from celery import Celery
    from sqlalchemy.engine import Engine

__all__ = ["send_pending_webhooks"]

log = logging.getLogger(__name__)


def send_pending_webhooks(app: Celery, engine: Engine, *, job_ids: Sequence[str] = (),
                          batch_id: str | None = None) -> int:
    """Enqueue attempt 1 of every unsent event of ``job_ids`` and the batch event of
    ``batch_id`` (call after the ending committed); returns how many were enqueued. Events of
    entities that have not ended, or whose first attempt was already made, are not pending.
    Raises LedgerError when the ledger cannot be read."""
    with session_scope(engine, readonly=True) as session:
        pending = first_attempts(session, job_ids=job_ids, batch_id=batch_id)
    sent = send_webhook_attempts(app, pending)
    log.info("webhooks enqueued=%d batch=%s jobs=%d", sent, batch_id, len(job_ids))
    return sent
