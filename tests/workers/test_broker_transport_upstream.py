"""What workers/broker_transport.py relies on in kombu's Redis transport, pinned so an upgrade
that moves it fails here, by name, rather than in a worker that crashes on a broker restart.

The patch overrides two methods of ``kombu.transport.redis.Channel`` and raises a
``redis.exceptions.ConnectionError`` subclass, which every close and ack path ignores only
while kombu counts that class among the transport's connection errors.
"""

from __future__ import annotations

import inspect

from kombu import Connection
from kombu.transport import redis as kombu_redis
from kombu.transport import resolve_transport
from kombu.transport.virtual import Channel as VirtualChannel
from redis.exceptions import ConnectionError as RedisConnectionError

from ragq.workers.broker_transport import TRANSPORT, Channel, DetachedChannelError, Transport


def test_connparams_keeps_its_signature_and_reads_the_connections_client() -> None:
    method = kombu_redis.Channel._connparams
    assert list(inspect.signature(method).parameters) == ["self", "asynchronous"]
    assert inspect.signature(method).parameters["asynchronous"].default is False
    # The defect mended: the client pool is built from ``self.connection.client``, which a
    # collected connection has set to None.
    assert "self.connection.client" in inspect.getsource(method)


def test_basic_publish_is_the_virtual_channels_with_exchange_and_routing_key() -> None:
    assert kombu_redis.Channel.basic_publish is VirtualChannel.basic_publish
    params = list(inspect.signature(VirtualChannel.basic_publish).parameters)
    assert params == ["self", "message", "exchange", "routing_key", "kwargs"]


def test_closing_a_connection_detaches_its_transport_client() -> None:
    """kombu's close (reached from ``collect``) sets ``transport.client = None``: the state in
    which the patched ``_connparams`` raises a lost connection."""
    connection = Connection("redis://127.0.0.1:1/0", transport=TRANSPORT)
    transport = connection.transport
    assert transport.client is connection
    connection._do_close_transport()
    assert transport.client is None


def test_a_redis_connection_error_is_one_of_the_transports_connection_errors() -> None:
    assert issubclass(DetachedChannelError, RedisConnectionError)
    assert RedisConnectionError in kombu_redis.Transport.connection_errors
    assert issubclass(DetachedChannelError, kombu_redis.Transport.connection_errors)


def test_the_transport_path_resolves_to_the_patched_transport() -> None:
    assert resolve_transport(TRANSPORT) is Transport
    assert Transport.Channel is Channel and issubclass(Channel, kombu_redis.Channel)
    assert kombu_redis.Transport.Channel is kombu_redis.Channel
