"""Cache fixtures on a real Redis-protocol server: the stack's own (the embedded Valkey of
`ragq up`, or the CI Redis of ``RAGQ_TEST_REDIS_URL`` in the redis+postgres and rabbitmq runs)."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import pytest
import redis

from ragq.caches import RedisEvidenceCache, RedisPlanCache, connect, resolve_cache_url
from ragq.schemas.cache import CachedHit
from ragq.workers.stack_state import effective_broker_url
from tests.conftest import Stack


@pytest.fixture
def redis_url(stack: Stack) -> str:
    """The URL of the stack's Redis-protocol server, the caches' default home (the broker, or
    the result backend when the broker is RabbitMQ)."""
    url = resolve_cache_url(cache_url=None, result_backend_url=stack.settings.result_backend_url,
                            broker_url=effective_broker_url(stack.settings))
    assert url, "the stack fixture records a Redis-protocol server"
    return url


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    """A plain client of the same server, to look at what the caches wrote."""
    plain = redis.Redis.from_url(redis_url)
    yield plain
    plain.close()


@pytest.fixture
def evidence_cache(redis_url: str, collection: str) -> Iterator[RedisEvidenceCache]:
    cache = RedisEvidenceCache(connect(redis_url, timeout_s=2.0), ttl_s=60)
    yield cache
    cache.drop_collection(collection)


@pytest.fixture
def plan_cache(redis_url: str) -> RedisPlanCache:
    return RedisPlanCache(connect(redis_url, timeout_s=2.0), ttl_s=120)


@pytest.fixture
def provider() -> str:
    """A provider name no other test uses, so plan keys never collide across tests."""
    return f"offline-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL where nothing listens: connecting is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"


@pytest.fixture
def silent_server_url() -> Iterator[str]:
    """A loopback URL that accepts connections and never answers: every command times out."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"redis://127.0.0.1:{sock.getsockname()[1]}/0"


def hit(doc: str = "d1", chunk: str = "c1", *, version: str = "v1",
        acl: tuple[str, ...] = ("staff",)) -> CachedHit:
    """One chunk as the retrieval task would cache it."""
    return CachedHit(doc_id=doc, chunk_id=chunk, score=0.75, source_version=version,
                     authority_tier=1, title="Refund policy",
                     text="Refunds are paid within 5 working days.", acl=list(acl))
