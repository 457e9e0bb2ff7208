"""The front door's handle on the queue: a client Celery app that sends tasks by name.

Front doors never import task modules (no onnxruntime in the CLI); they address tasks by the
names in :mod:`workers.queues`.
"""

from __future__ import annotations

from functools import lru_cache

from celery import Celery

from ragq.errors import StackError
from ragq.settings import Settings
from ragq.workers.app import create_app
from ragq.workers.stack_state import effective_broker_url


@lru_cache(maxsize=8)
def _client_app(settings: Settings, broker_url: str) -> Celery:
    app = create_app(settings, include_tasks=False)
    _opened.append(app)
    return app


_opened: list[Celery] = []


def close_clients() -> None:
    """Close the result-backend subscriptions of every client app this process opened.

    Left open, Celery result handles unsubscribe in ``__del__`` during interpreter shutdown,
    when the modules they need are already gone, and print tracebacks.
    """
    for app in _opened:
        consumer = getattr(app.backend, "result_consumer", None)
        if consumer is not None and getattr(consumer, "_pubsub", None) is not None:
            consumer.stop()
            consumer._pubsub = None


def client_app(settings: Settings) -> Celery:
    """A Celery app connected to the broker these settings resolve to.

    Raises StackError when no broker is known: the embedded stack is not running and no
    ``RAGQ_BROKER_URL`` is set.
    """
    broker = effective_broker_url(settings)
    if broker is None:
        raise StackError(
            f"no broker: the embedded stack under {settings.home} is not running. "
            "Start it with `ragq up`, or set RAGQ_BROKER_URL to a Redis/RabbitMQ server."
        )
    return _client_app(settings, broker)


def ping_workers(settings: Settings, timeout_s: float = 1.0) -> list[str]:
    """Node names of the workers that answered a ping within ``timeout_s``."""
    try:
        replies = client_app(settings).control.ping(timeout=timeout_s) or []
    except (OSError, ConnectionError):
        return []
    except Exception as exc:  # kombu raises transport-specific errors
        if "connect" in str(exc).lower():
            return []
        raise
    return sorted(node for reply in replies for node in reply)


def call(settings: Settings, name: str, *args: object, timeout_s: float = 60.0) -> object:
    """Send task ``name`` and wait for its result (front doors only; never inside a task).

    Raises StackError when no worker answers within ``timeout_s``.
    """
    from celery.exceptions import TimeoutError as CeleryTimeout

    result = client_app(settings).send_task(name, args=args)
    try:
        return result.get(timeout=timeout_s)
    except CeleryTimeout as exc:
        raise StackError(
            f"{name} got no answer within {timeout_s:.0f}s: is a worker consuming its queue? "
            "(`ragq status`)"
        ) from exc
