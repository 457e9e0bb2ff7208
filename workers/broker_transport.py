"""kombu's Redis transport, with one defect mended: a worker that loses its broker must not crash.

When the broker goes away, Celery's consumer first *collects* the broken connection (which
detaches the transport from it: ``transport.client = None``) and only then closes it. Closing
a channel that still holds unacknowledged deliveries gives them back through a new client
pool, built from ``transport.client``, and kombu's ``_connparams`` dereferences that ``None``:
an ``AttributeError`` no close path ignores, so the worker died ("Unrecoverable error") instead
of reconnecting. Workers with many threads hold unacked deliveries at nearly every moment,
so with a wide I/O pool it happened on almost every broker restart.

Here a detached channel says what it is, a lost connection, which every close and ack path
already ignores; the deliveries it could not give back stay in the broker's unacked set and
come back after the visibility timeout, exactly as when the give-back itself meets a dead
broker.

The same closing leaves pooled producers on closed channels (``channel.connection = None``).
A task thread that sends its next step on one got an ``AttributeError`` too, which failed the
step and its job; a closed channel now raises the lost-connection error, so kombu's publish
retry revives the producer on a new channel and sends the step.

And one order reversed: kombu's Redis transport serves a message priority of 0 first, the
opposite of AMQP's (and of Celery's ``priority`` option elsewhere: 9 is the highest). Here 9 is
served first, as on RabbitMQ, so an interactive job's steps (sent with 9, see
:func:`ragq.schemas.tasks.message_priority`) are taken before a bulk backlog's (0, and every
message sent with no priority) on either broker (docs/fair-share.md#priority). The lists are
kombu's: a queue's highest priority is its plain list ``name``, the lower ones
``name\x06\x16{3,6,9}``; whoever counts a queue sums every one of them.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

#: ``broker_transport`` for a Redis or Valkey broker URL (see ``celeryconfig``).
TRANSPORT = f"{__name__}:Transport"


class DetachedChannelError(RedisConnectionError):
    """A channel asked for a new broker client after its connection was closed."""


class Channel(kombu_redis.Channel):
    def _get_message_priority(self, message: Any, reverse: bool = False) -> int:
        """The list a message goes to (on a send and when it is given back): the first served
        for priority 9, the last for 0."""
        return int(super()._get_message_priority(message, reverse=not reverse))

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection is None or self.connection.client is None:
            raise DetachedChannelError(
                "the broker connection of this channel is closed (it was lost)")
        return super()._connparams(asynchronous=asynchronous)

    def basic_publish(self, message: Any, exchange: str = "", routing_key: str = "",
                      **kwargs: Any) -> Any:
        if self.connection is None:  # closed under a task that was sending its next step
            raise DetachedChannelError("this channel was closed (its broker connection was lost)")
        return super().basic_publish(message, exchange=exchange, routing_key=routing_key,
                                     **kwargs)


class Transport(kombu_redis.Transport):
    Channel = Channel


def priority_lists(queue: str) -> list[str]:
    """The Redis lists that hold ``queue``'s messages, one per priority step, the first served
    first (kombu's names, with its default steps and separator, which ragq does not change)."""
    return [f"{queue}{Channel.sep}{step}" if step else queue
            for step in kombu_redis.PRIORITY_STEPS]
