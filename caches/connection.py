"""Which server the caches use, and a client that fails fast.

Unless ``RAGQ_CACHE_URL`` names one, the caches live on the stack's own Redis-protocol server:
the result backend when it is Redis, else the broker when it is Redis (the embedded Valkey of
`ragq up` is both). A RabbitMQ-only stack has no cache server, and the caches are disabled.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ragq.errors import ConfigurationError

log = logging.getLogger(__name__)

REDIS_SCHEMES = frozenset({"redis", "rediss", "unix"})


def _is_redis(url: str) -> bool:
    return urlsplit(url).scheme in REDIS_SCHEMES


def resolve_cache_url(*, cache_url: str | None, result_backend_url: str | None,
                      broker_url: str | None) -> str | None:
    """The URL the caches connect to, or None when the stack has no Redis-protocol server.

    Raises ConfigurationError when ``cache_url`` is set but is not a Redis URL.
    """
    if cache_url:
        if not _is_redis(cache_url):
            raise ConfigurationError(
                f"RAGQ_CACHE_URL must be a redis://, rediss:// or unix:// URL, got scheme "
                f"{urlsplit(cache_url).scheme!r}; unset it to use the broker's server")
        return cache_url
    for url in (result_backend_url, broker_url):
        if url and _is_redis(url):
            return url
    log.warning("caches disabled: no Redis-protocol server known (the embedded stack is not "
                "running and neither the broker nor the result backend is Redis); "
                "set RAGQ_CACHE_URL to enable them")
    return None


def connect(url: str, *, timeout_s: float) -> redis.Redis:
    """A client whose every connect and command gives up after ``timeout_s`` seconds, without
    retries: a slow cache is a miss, never a slow job. Connects lazily, never raises here."""
    return redis.Redis.from_url(
        url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
        retry=Retry(NoBackoff(), 0), health_check_interval=30,
    )
