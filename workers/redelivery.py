"""Hand the deliveries of a dead process back to their queues at once (Redis-protocol brokers).

kombu's Redis transport emulates acknowledgements: a delivered message waits in the ``unacked``
hash (its delivery time in the ``unacked_index`` sorted set) until its worker acks it, and only a
sweep after the visibility timeout puts it back — 11 minutes at the default task bound. The
resident supervisor knows sooner: once it has replaced a dead process, a delivery that no live
worker holds (active or reserved) belongs to nobody, and goes back to the head of its queue.

RabbitMQ needs none of this: it requeues a consumer's unacknowledged messages the moment its
connection closes.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass

from celery import Celery

from ragq.errors import StackError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Restored:
    """What :func:`restore_orphans` put back: how many deliveries, and when the oldest of them
    was delivered (epoch seconds; None when nothing was restored)."""

    count: int
    oldest_delivery_at: float | None


def uses_redis_transport(app: Celery) -> bool:
    """True when ``app``'s broker keeps unacknowledged messages itself (kombu's Redis
    transport), so a dead consumer's messages wait for someone to restore them."""
    with app.connection_for_write() as conn:
        return bool(conn.transport.driver_type == "redis")


def held_requests(app: Celery, timeout_s: float, workers: int) -> list[dict[str, object]]:
    """The requests (task id, name, arguments) the stack's ``workers`` hold: reserved first,
    then active, then scheduled (a retry waiting out its countdown), so a task that moves from
    one to the next between the questions is still seen.

    Raises StackError when fewer than ``workers`` answer each question (one still reconnecting
    to a broker that has just come back): its tasks would look like nobody's and run twice.
    """
    if workers == 0:
        return []
    inspect = app.control.inspect(timeout=timeout_s, limit=workers)
    held: list[dict[str, object]] = []
    for ask in (inspect.reserved, inspect.active, inspect.scheduled):
        replies = ask() or {}
        if len(replies) < workers:
            raise StackError(f"{len(replies)} of {workers} workers answered "
                             f"({sorted(replies)}); not restoring anything yet")
        for requests in replies.values():
            held.extend(r.get("request", r) for r in requests)  # scheduled: {"eta", "request"}
    return held


def held_task_ids(app: Celery, timeout_s: float, workers: int) -> set[str]:
    """Ids of the tasks the stack's ``workers`` hold (see :func:`held_requests`)."""
    return {str(r.get("id")) for r in held_requests(app, timeout_s, workers)}


def restore_orphans(app: Celery, *, workers: int, timeout_s: float = 2.0) -> Restored:
    """Put back every unacknowledged delivery that none of the stack's ``workers`` holds and
    that was made before this call; returns what was put back.

    Raises StackError when not every worker answered within ``timeout_s`` (ask again later).
    """
    cutoff = time.time()
    held = held_task_ids(app, timeout_s, workers)
    restored: list[float] = []
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        client = channel.client
        delivered = dict(client.zrange(channel.unacked_index_key, 0, -1, withscores=True))
        for tag, payload in client.hgetall(channel.unacked_key).items():
            at = delivered.get(tag, cutoff - 0.001)  # no index entry: count it as just now
            task_id = task_id_of(payload)
            if at >= cutoff or task_id in held:
                continue
            channel.qos.restore_by_tag(tag, client=client, leftmost=True)
            restored.append(at)
            log.warning("restored delivery of task %s (delivered %.1fs ago)", task_id,
                        cutoff - at)
    return Restored(len(restored), min(restored) if restored else None)


def task_id_of(raw: bytes | str) -> str | None:
    """The Celery task id in an ``unacked`` entry (``[message, exchange, routing_key]``)."""
    try:
        message = json.loads(raw)[0]
    except (ValueError, IndexError, TypeError):
        return None
    headers = message.get("headers") or {}
    return headers.get("id") or (message.get("properties") or {}).get("correlation_id")
