"""RabbitMQ queues that take message priorities, and the upgrade of queues declared without.

An interactive job's steps are sent with a higher message priority than a bulk backlog's
(docs/fair-share.md#priority). RabbitMQ honours it only on a queue declared with
``x-max-priority``, and a queue's arguments are fixed when it is declared: a queue an older
ragq declared without the argument refuses the new declaration (``PRECONDITION_FAILED``), so
no worker could consume it and no step could be sent to it.

:func:`ensure_priority_queues` runs when a worker starts (before it consumes): an empty queue
without the argument is deleted and declared again with it; one that still holds messages is
left alone and the worker refuses to start, saying how many messages wait where (let the older
workers drain them, or purge them, then start again). Redis and Valkey need none of this: their
priorities are lists kombu names per priority step (:mod:`ragq.workers.broker_transport`).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery, bootsteps
from kombu import Connection
from kombu import Queue as KombuQueue

from ragq.errors import StackError
from ragq.schemas.tasks import MAX_PRIORITY

log = logging.getLogger(__name__)

#: The queue argument that makes RabbitMQ order a queue's messages by priority.
MAX_PRIORITY_ARGUMENT = "x-max-priority"
#: AMQP's reply code for a declaration whose arguments differ from the queue's.
PRECONDITION_FAILED = 406


def queue_arguments() -> dict[str, Any]:
    """The arguments every ragq queue is declared with."""
    return {MAX_PRIORITY_ARGUMENT: MAX_PRIORITY}


def uses_amqp(app: Celery) -> bool:
    """Whether the app's broker is RabbitMQ (an AMQP URL)."""
    url = str(app.conf.broker_url or "")
    return url.partition("://")[0].lower() in {"amqp", "amqps", "pyamqp"}


def ensure_priority_queues(app: Celery, queues: list[KombuQueue] | None = None) -> list[str]:
    """Declare ``queues`` (the app's, by default) on a RabbitMQ broker; an empty one declared
    earlier without :data:`MAX_PRIORITY_ARGUMENT` is deleted and declared again. Returns the
    names redeclared. Nothing on any other broker.

    Raises StackError naming every such queue that holds messages, with their counts."""
    if not uses_amqp(app):
        return []
    wanted = list(queues if queues is not None else app.conf.task_queues or ())
    redeclared: list[str] = []
    refused: list[str] = []
    with Connection(app.conf.broker_url, connect_timeout=5) as connection:
        for queue in wanted:
            if _declares(connection, queue):
                continue
            messages, consumers = _counts(connection, queue.name)
            if messages:
                refused.append(f"{queue.name}: {messages} message(s), {consumers} consumer(s)")
                continue
            channel = connection.channel()
            try:
                channel.queue_delete(queue.name, if_empty=True)
            finally:
                channel.close()
            if not _declares(connection, queue):
                refused.append(f"{queue.name}: could not be declared again")
                continue
            log.warning("queue %s was declared without %s; empty, so declared again with it",
                        queue.name, MAX_PRIORITY_ARGUMENT)
            redeclared.append(queue.name)
    if refused:
        raise StackError(
            "RabbitMQ queues declared by an older ragq without message priorities "
            f"({MAX_PRIORITY_ARGUMENT}) still hold messages: " + "; ".join(refused)
            + ". Let the older workers finish them (or purge the queues), then start again: "
            "an empty queue is declared again with priorities.")
    return redeclared


def _declares(connection: Connection, queue: KombuQueue) -> bool:
    """Declare ``queue`` with its arguments; False when the broker holds it with others."""
    channel = connection.channel()
    try:
        queue(channel).declare()
    except connection.channel_errors as exc:
        if getattr(exc, "reply_code", None) != PRECONDITION_FAILED:
            raise
        return False
    finally:
        _close(connection, channel)
    return True


def _counts(connection: Connection, name: str) -> tuple[int, int]:
    """(messages, consumers) of a queue, from a passive declare (which checks no arguments)."""
    channel = connection.channel()
    try:
        ok = channel.queue_declare(queue=name, passive=True)
        return int(ok.message_count), int(ok.consumer_count)
    finally:
        _close(connection, channel)


def _close(connection: Connection, channel: Any) -> None:
    try:
        channel.close()
    except connection.channel_errors + connection.connection_errors:
        pass  # the broker closed it already (a refused declaration closes its channel)


class PriorityQueuesStep(bootsteps.Step):
    """A worker's start-up step: the queues take priorities before the worker consumes them
    (a worker whose queues still hold older messages does not start)."""

    label = "ragq priority queues"

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        ensure_priority_queues(parent.app)
        super().__init__(parent, **kwargs)
