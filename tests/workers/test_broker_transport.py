"""A worker whose Redis broker dies while it holds unacknowledged deliveries reconnects instead
of crashing (workers/broker_transport.py), on a real Valkey server killed under it.

Celery's consumer, on a lost broker, detaches the connection's transport (kombu's
``collect``) and then closes the connection; a channel that is still open then gives its
deliveries back through a client built from the detached transport. The test puts a channel in
that state and closes it the way Celery does, with ``ignore_errors``: kombu's own transport
raises an ``AttributeError`` there (the worker's "Unrecoverable error"), ours a lost
connection, which ``ignore_errors`` lets pass.
"""

from __future__ import annotations

import subprocess

import pytest
from kombu import Connection, Exchange, Producer, Queue
from kombu.common import ignore_errors

from ragq.settings import build_settings
from ragq.workers.broker_transport import TRANSPORT, DetachedChannelError
from ragq.workers.celeryconfig import celery_config


def _holding_a_delivery(url: str, transport: str | None) -> Connection:
    """A connection whose default channel holds one delivery it has not acknowledged."""
    connection = Connection(url, transport=transport)
    channel = connection.default_channel
    queue = Queue("work", Exchange("work"), routing_key="work")
    Producer(channel).publish({"n": 1}, exchange=queue.exchange, routing_key="work",
                              declare=[queue])
    assert channel.basic_get("work", no_ack=False) is not None
    assert len(channel.qos._delivered) == 1
    return connection


def _lose_the_broker(connection: Connection, server: subprocess.Popen[bytes]) -> None:
    server.kill()
    server.wait()
    connection.transport.client = None  # what kombu's collect() does to a lost connection


@pytest.mark.parametrize("transport", [None, TRANSPORT], ids=["kombu", "ragq"])
def test_closing_a_channel_after_its_broker_was_lost(
        valkey: tuple[str, subprocess.Popen[bytes]], transport: str | None) -> None:
    url, server = valkey
    connection = _holding_a_delivery(url, transport)
    channel = connection.default_channel
    _lose_the_broker(connection, server)

    if transport is None:  # the defect this transport mends, so the test can tell them apart
        with pytest.raises(AttributeError, match="hostname"):
            ignore_errors(connection, connection.close)
    else:
        ignore_errors(connection, connection.close)
        assert channel.closed


def test_the_detached_channel_reports_a_lost_connection(
        valkey: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, server = valkey
    connection = _holding_a_delivery(url, TRANSPORT)
    channel = connection.default_channel
    _lose_the_broker(connection, server)

    try:
        with pytest.raises(DetachedChannelError) as raised:
            channel._connparams()  # where a give-back builds its new client pool
        assert isinstance(raised.value, connection.connection_errors)
    finally:
        # As Celery closes it. Left open, the channel would try its give-back again when the
        # test process exits, and print a traceback about the broker killed above.
        ignore_errors(connection, connection.close)


@pytest.mark.parametrize(("broker", "expected"), [
    ("redis://127.0.0.1:6379/0", TRANSPORT),
    ("rediss://cache.example:6380/0", TRANSPORT),
    ("amqp://guest:guest@127.0.0.1:5672//", None),
])
def test_redis_brokers_get_the_mended_transport(broker: str, expected: str | None) -> None:
    assert celery_config(build_settings(), broker)["broker_transport"] == expected


@pytest.mark.parametrize("transport", [None, TRANSPORT], ids=["kombu", "ragq"])
def test_a_producer_on_a_closed_channel_publishes_on_a_new_one(
        valkey: tuple[str, subprocess.Popen[bytes]], transport: str | None) -> None:
    """A task that sends its next step while the consumer closes channels after a lost broker
    holds a producer whose channel is gone; the publish must retry on a new channel, not fail
    the step (a job failed this way in a broker-kill drill)."""
    url, _ = valkey
    connection = Connection(url, transport=transport)
    queue = Queue("next", routing_key="next")  # the default exchange, as Celery's queues here
    producer = Producer(connection)  # as Celery's producer pool makes them
    producer.publish({"n": 0}, exchange=queue.exchange, routing_key="next", declare=[queue])
    producer.channel.close()  # what the consumer's shutdown of a lost connection does

    def publish() -> None:
        producer.publish({"n": 1}, exchange=queue.exchange, routing_key="next", retry=True,
                         retry_policy={"max_retries": 2, "interval_start": 0})

    if transport is None:  # the defect: a bare AttributeError that no retry catches
        with pytest.raises(AttributeError, match="client"):
            publish()
        return
    publish()
    with Connection(url) as reader:
        bodies = [reader.SimpleQueue("next").get(timeout=1).payload for _ in range(2)]
    assert bodies == [{"n": 0}, {"n": 1}]
