"""What a flow step sends, as Celery messages: job-level steps by name, a layer as one
pipeline start per sub-query, webhook attempts (the one place they are sent).
Tasks are addressed by name, so no task module is imported here."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from celery import Celery
from celery.canvas import Signature
from kombu import Connection
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError

from ragq.schemas.tasks import Task

log = logging.getLogger(__name__)

#: Seconds between attempts to send a step's next message while the broker is away: about a
#: minute in all, ample for a broker the supervisor restarts in seconds.
SEND_BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)

#: What a send raises while the broker is away: kombu's and the socket's connection errors, and
#: the AttributeError kombu's Redis transport raises from a channel whose connection it already
#: closed (``_connparams`` on a None connection), which no retry policy of kombu's catches.
BROKER_AWAY = (OperationalError, RedisConnectionError, ConnectionError, OSError, AttributeError)


def step_signature(app: Celery, task: str, job_id: str, args: Sequence[Any] = ()) -> Signature:
    """A flow step by name (immutable: it ignores a parent's result)."""
    return app.signature(task, args=(job_id, *args), immutable=True)


class CeleryDispatcher:
    """:class:`ragq.tasks.runner.Dispatcher` over a Celery app."""

    def __init__(self, app: Celery, backoff_s: Sequence[float] = SEND_BACKOFF_S):
        self._app = app
        self._backoff_s = tuple(backoff_s)

    def enqueue(self, job_id: str, task: str, args: Sequence[Any]) -> None:
        self._send(lambda conn: step_signature(self._app, task, job_id, args).apply_async(
            connection=conn))

    def enqueue_layer(self, job_id: str, round_: int, layer: int,
                      indexes: Sequence[int]) -> None:
        """Every sub-query's pipeline in parallel, over one producer; the ledger joins them
        (``after_layer`` comes from the step that ends the last). Raises ValueError for an
        empty layer, which a validated plan never has: nothing would ever join it."""
        if not indexes:
            raise ValueError(f"job {job_id}: layer {layer} of round {round_} has no sub-queries")
        def send(conn: Connection | None) -> None:
            with self._app.producer_or_acquire() as pooled:
                producer = pooled if conn is None else conn.Producer(auto_declare=False)
                for index in indexes:
                    step_signature(self._app, Task.RETRIEVE, job_id, (round_, index)
                                   ).apply_async(producer=producer)

        self._send(send)

    def send_webhooks(self, webhook_ids: Sequence[str]) -> None:
        self._send(lambda conn: send_webhook_attempts(self._app, webhook_ids, conn))

    def _send(self, send: Callable[[Connection | None], object]) -> None:
        """Send, waiting out a broker that is away: the step's writes are committed, and a
        step that failed here would fail its job for a restart the supervisor heals in
        seconds. The first try takes a pooled connection; each retry a fresh one (a pooled one
        may be dead). A message sent twice is a step delivered twice, which the ledger's keys
        absorb."""
        try:
            send(None)
            return
        except BROKER_AWAY as exc:
            failure: Exception = exc
        for pause in self._backoff_s:
            log.warning("sending failed (%s: %s); again in %.1fs", type(failure).__name__,
                        failure, pause)
            time.sleep(pause)
            try:
                with self._app.connection_for_write() as conn:
                    send(conn)
                return
            except BROKER_AWAY as exc:
                failure = exc
        raise failure


def send_webhook_attempts(app: Celery, webhook_ids: Sequence[str],
                          connection: Connection | None = None) -> int:
    """Hand attempt 1 of each event to the delivery task, over one producer (a cancelled
    5,000-job batch has as many events; ``connection``: its own, else a pooled one); returns
    how many were sent."""
    if not webhook_ids:
        return 0
    with app.producer_or_acquire() as pooled:
        producer = pooled if connection is None else connection.Producer(auto_declare=False)
        for webhook_id in webhook_ids:
            app.send_task(Task.DELIVER_WEBHOOK, args=(webhook_id, 1), producer=producer)
    return len(webhook_ids)
