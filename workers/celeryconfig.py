"""Celery configuration derived from settings: the one place queue and reliability options live."""

from __future__ import annotations

from typing import Any

from kombu import Queue as KombuQueue

from ragq.settings import Settings
from ragq.workers import broker_transport
from ragq.workers.priority_queues import queue_arguments
from ragq.workers.queues import Queue, route_task

#: Used when no broker is known, so a stray send fails loudly instead of reaching a default
#: broker that happens to run on the machine (Celery's default is amqp://localhost).
UNRESOLVED_BROKER = "redis://ragq-stack-is-not-running.invalid:6379/0"


def celery_config(settings: Settings, broker_url: str | None) -> dict[str, Any]:
    """Options for ``app.conf.update``.

    Reliability: acks late + reject on worker loss, so a task whose worker dies is redelivered
    rather than lost (tasks are written to be idempotent); prefetch 1 so a long task does not hold
    back others queued behind it, and so a message's priority counts: a worker that had taken
    many bulk messages ahead would run them before an interactive one sent after.
    """
    broker = broker_url or UNRESOLVED_BROKER
    backend = settings.result_backend_url or broker
    hard_limit = settings.task_time_limit_s
    return {
        "broker_url": broker,
        # None lets the URL's scheme choose (amqp://: kombu's own).
        "broker_transport": _transport(broker),
        "result_backend": backend,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_time_limit": hard_limit,
        "task_soft_time_limit": max(hard_limit - 10, hard_limit * 0.9),
        # No STARTED state: nobody reads it (jobs are followed in the ledger), and it would cost
        # every task one more write to the result backend.
        "task_track_started": False,
        "result_expires": 24 * 3600,
        "result_extended": True,
        "broker_connection_retry_on_startup": True,
        # A step that ends while the broker restarts keeps trying to send what comes next
        # (about a minute) instead of failing its job; the supervisor restarts it in about 1 s.
        "task_publish_retry": True,
        "task_publish_retry_policy": {"max_retries": 60, "interval_start": 0,
                                      "interval_step": 0.5, "interval_max": 1.0},
        # A result the backend cannot take now (the broker, which is also the backend, is
        # restarting) is stored again until it can, for about a minute: a layer's chord counts
        # its pipelines' results, and one result lost left its job waiting forever.
        "result_backend_always_retry": True,
        "result_backend_max_retries": 60,
        "result_backend_base_sleep_between_retries_ms": 100,
        "result_backend_max_sleep_between_retries_ms": 1000,
        "broker_transport_options": _transport_options(settings),
        "result_backend_transport_options": _transport_options(settings),
        # Every queue takes message priorities on RabbitMQ (an interactive job's steps go first,
        # docs/fair-share.md#priority); kombu's Redis transport ignores queue arguments.
        "task_queues": [KombuQueue(q.value, routing_key=q.value,
                                   queue_arguments=queue_arguments()) for q in Queue],
        "task_default_queue": Queue.BOOKKEEPING.value,
        "task_routes": (route_task,),
        # No task events unless someone watches: they cost every task four messages (sent,
        # received, started, succeeded) that nobody reads but Flower, and Flower switches them
        # on in the workers itself when it connects (its ``enable_events``). They once had to
        # stay on because, without them, a broker restart crashed every worker; the mended
        # transport (``broker_transport``) is what fixes that now.
        "worker_send_task_events": settings.task_events,
        "task_send_sent_event": settings.task_events,
        "worker_hijack_root_logger": False,
    }


def _transport(broker_url: str) -> str | None:
    """Redis and Valkey brokers get kombu's Redis transport with its lost-broker crash mended
    (see :mod:`ragq.workers.broker_transport`)."""
    scheme = broker_url.partition("://")[0].lower()
    return broker_transport.TRANSPORT if scheme in {"redis", "rediss"} else None


def _transport_options(settings: Settings) -> dict[str, int]:
    """How soon a Redis broker hands a dead worker's task to another: after the visibility
    timeout (longer than any task may run, so a slow task is never run twice at once), found by
    a sweep every few seconds (kombu's default sweeps only every ~100 s)."""
    visibility = int(settings.redelivery_s)
    return {"visibility_timeout": visibility,
            "unacked_restore_interval": max(1, min(10, visibility // 6)),
            "unacked_restore_throttle": 1}
