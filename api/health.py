"""``/healthz``: is each component the API depends on answering? (broker, ledger, vectors)"""

from __future__ import annotations

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


def check_broker(settings: Settings) -> str | None:
    """Raises when the broker does not answer a PING; returns its URL."""
    url = effective_broker_url(settings)
    if url is None:
        raise RagqError("no broker: the embedded stack is not running (ragq up)")
    if url.startswith(("redis://", "rediss://")):
        with redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1) as client:
            client.ping()
    return url


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
        return settings.qdrant_url
    from ragq.workers.client import call

    call(settings, Task.ECHO_RETRIEVAL, 1, timeout_s=3)
    return "embedded (vector worker answered)"


def run_checks(checks: dict[str, Check]) -> dict[str, ComponentHealth]:
    """Each component's health; an exception is that component being down."""
    out = {}
    for name, check in checks.items():
        try:
            out[name] = ComponentHealth(ok=True, detail=check())
        except Exception as exc:  # any failure of a dependency means "down", with its reason
            out[name] = ComponentHealth(ok=False, detail=f"{type(exc).__name__}: {exc}")
    return out
