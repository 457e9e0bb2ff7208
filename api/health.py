"""``/healthz``: is each component the API depends on answering? (broker, ledger, vectors)

It names components and their states only: no URL, host, port or credential, since anyone who
can reach the port may ask (load balancers call it without a key)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import httpx
import redis

from ragq.errors import RagqError
from ragq.ledger import ping, session_scope
from ragq.schemas.api import ComponentHealth
from ragq.schemas.tasks import Task
from ragq.settings import Settings
from ragq.workers.stack_state import effective_broker_url

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

Check = Callable[[], str | None]
log = logging.getLogger(__name__)


def check_broker(settings: Settings) -> str | None:
    """Raises when the broker does not answer a PING; returns what kind of broker answered."""
    url = effective_broker_url(settings)
    if url is None:
        raise RagqError("no broker: the embedded stack is not running (ragq up)")
    if url.startswith(("redis://", "rediss://")):
        with redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1) as client:
            client.ping()
        return "answered PING"
    return "configured (not pinged)"


def check_database(engine: Engine) -> str | None:
    """Raises when the ledger does not answer ``SELECT 1``."""
    with session_scope(engine, readonly=True) as session:
        ping(session)
    return None


def check_vectors(settings: Settings) -> str | None:
    """A Qdrant server must answer ``/readyz``; the embedded store is owned by the vector worker,
    so that worker must answer a task on the retrieval queue."""
    if settings.qdrant_url == ":memory:":
        return "in-memory"
    if settings.qdrant_url:
        headers = ({"api-key": settings.qdrant_api_key.get_secret_value()}
                   if settings.qdrant_api_key else {})
        httpx.get(f"{settings.qdrant_url.rstrip('/')}/readyz", timeout=2,
                  headers=headers).raise_for_status()
        return "server (ready)"
    from ragq.workers.client import call

    call(settings, Task.ECHO_RETRIEVAL, 1, timeout_s=3)
    return "embedded (vector worker answered)"


def run_checks(checks: dict[str, Check]) -> dict[str, ComponentHealth]:
    """Each component's health; an exception is that component being down. The detail of a
    failure is its kind only: a driver's message may carry a URL, a host or a user name."""
    out = {}
    for name, check in checks.items():
        try:
            out[name] = ComponentHealth(ok=True, detail=check())
        except Exception as exc:  # any failure of a dependency means "down"
            log.warning("healthz: %s is down: %s", name, exc)
            out[name] = ComponentHealth(ok=False, detail=f"not answering ({type(exc).__name__})")
    return out
