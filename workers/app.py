"""The Celery app. Workers load it with ``celery -A ragq.workers.app worker -Q <queues>``.

The module-level ``app`` is the one piece of global state besides settings: Celery's worker CLI
needs an importable app. Front-door code builds its own client app with :func:`create_app`
(``include_tasks=False``) for the settings it was given, and sends tasks by name.
"""

from __future__ import annotations

import logging

from celery import Celery
from celery.signals import (
    after_setup_logger,
    task_postrun,
    task_prerun,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from ragq import deadlines
from ragq.settings import Settings, build_settings
from ragq.workers.celeryconfig import celery_config
from ragq.workers.heap import freeze_start_up_heap
from ragq.workers.priority_queues import PriorityQueuesStep
from ragq.workers.resources import close_all, resources_for
from ragq.workers.stack_state import effective_broker_url

log = logging.getLogger(__name__)

#: Modules whose tasks a worker registers.
TASK_MODULES = [
    "ragq.tasks.diagnostics", "ragq.tasks.ingest", "ragq.tasks.search", "ragq.tasks.flow",
    "ragq.tasks.webhooks",
]


def create_app(settings: Settings, *, include_tasks: bool = True) -> Celery:
    """A Celery app configured from ``settings``; ``include_tasks`` for worker processes."""
    app = Celery("ragq", include=TASK_MODULES if include_tasks else [])
    app.conf.update(celery_config(settings, effective_broker_url(settings)))
    if include_tasks:  # a worker: its RabbitMQ queues take priorities before it consumes
        app.steps["worker"].add(PriorityQueuesStep)
    app.conf.ragq_settings = settings
    # Tasks reach the process's adapters through their app (built lazily, once per process).
    app.conf.ragq_resources = resources_for(settings)
    return app


@after_setup_logger.connect
def _quiet_http_requests(**_: object) -> None:
    """httpx logs every request at INFO: seven lines per job, half a worker's log, each
    formatted on the thread that waits for the model. The ledger records every model call
    (role, latency, tokens, outcome), so a worker logs only httpx's warnings."""
    logging.getLogger("httpx").setLevel(logging.WARNING)


@task_prerun.connect
def _start_bound(task: object = None, **_: object) -> None:
    """Start the task's cooperative bound in the thread that runs it: the soft time limit,
    which Celery's thread pool does not enforce itself (see :mod:`ragq.deadlines`)."""
    conf = getattr(getattr(task, "app", None), "conf", None)
    deadlines.start(getattr(conf, "task_soft_time_limit", None))


@task_postrun.connect
def _end_bound(**_: object) -> None:
    deadlines.clear()


@worker_ready.connect
def _get_ready(sender: object = None, **_: object) -> None:
    """Build the adapters this worker's queues need before its first task (see
    :meth:`WorkerResources.warm`): a backlog sent to a fresh worker then starts at once. Then
    freeze what start-up built: it lives as long as the worker, and full collections need not
    walk it (:mod:`ragq.workers.heap`)."""
    app = getattr(sender, "app", None)
    resources = getattr(getattr(app, "conf", None), "ragq_resources", None)
    if app is not None and resources is not None:
        resources.warm(set(app.amqp.queues.consume_from or ()))
    frozen = freeze_start_up_heap()
    log.debug("froze %d start-up objects", frozen)


@worker_shutdown.connect
@worker_process_shutdown.connect
def _close_resources(**_: object) -> None:
    """Flush and unlock the vector store before the process exits, so the next owner can open it."""
    close_all()


app = create_app(build_settings())
