"""Starting waiting jobs from outside a flow step: after a submission or a cancel (the front
door) and on the supervisor's sweep. A job's ending starts the next ones itself, in the step
that ended it (:class:`ragq.tasks.runner.Runner`); both claim through
:func:`ragq.ledger.claim_due`, and :mod:`ragq.ledger.waiting_line` says what the window and the
lost sends are."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ragq.ledger import claim_due
from ragq.schemas.tasks import Task, message_priority
from ragq.settings import Settings
from ragq.workers.wiring import waiting_line

if TYPE_CHECKING:
    from celery import Celery
    from sqlalchemy.engine import Engine

__all__ = ["start_waiting_jobs"]

log = logging.getLogger(__name__)


def start_waiting_jobs(app: Celery, engine: Engine, settings: Settings) -> int:
    """Claim the waiting jobs the window has room for and send their route steps (one
    producer for them all, each with its job's broker priority); returns how many were sent.
    The broker is reached first: one that is down raises kombu's OperationalError before any
    job is claimed, rather than leaving the claimed jobs to be sent again only after the
    redelivery time. Raises LedgerError when the
    ledger cannot be written."""
    with app.producer_or_acquire() as producer:
        producer.connection.ensure_connection(max_retries=1)
        claimed = claim_due(engine, waiting_line(settings))
        for job in claimed:
            app.send_task(Task.ROUTE, args=(job.job_id,), producer=producer,
                          priority=message_priority(job.priority))
    if claimed:
        log.info("started %d waiting job(s)", len(claimed))
    return len(claimed)
