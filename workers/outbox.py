"""The webhook outbox: the one place that finds events whose first attempt is still unsent and
hands each to the delivery task (:data:`Task.DELIVER_WEBHOOK`, on the bookkeeping queue).

The ledger records an event as its first attempt row in the transaction that ends the job or
batch, so the event exists exactly when the ending does. Whoever ended something (a flow step, a
cancel, an all-invalid batch) calls :func:`send_pending_webhooks` after that transaction
committed. Calling it twice is harmless: delivery claims an attempt before sending it, so a
duplicate task finds it taken and sends nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragq.ledger import first_attempts, session_scope
from ragq.schemas.tasks import Task

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
    if not pending:
        return 0
    # One producer (one broker connection) for all of them: a cancelled 5,000-job batch has
    # as many job events.
    with app.producer_or_acquire() as producer:
        for webhook_id in pending:
            app.send_task(Task.DELIVER_WEBHOOK, args=(webhook_id, 1), producer=producer)
    log.info("webhooks enqueued=%d batch=%s jobs=%d", len(pending), batch_id, len(job_ids))
    return len(pending)
