"""The Celery app. Workers load it with ``celery -A workers.app worker -Q <queues>``.

The module-level ``app`` is the one piece of global state besides settings: Celery's worker CLI
needs an importable app. Front-door code builds its own client app with :func:`create_app`
(``include_tasks=False``) for the settings it was given, and sends tasks by name.
"""

from __future__ import annotations

from celery import Celery

from ragq.settings import Settings, build_settings
from ragq.workers.celeryconfig import celery_config
from ragq.workers.stack_state import effective_broker_url

#: Modules whose tasks a worker registers.
TASK_MODULES = [
    "ragq.tasks.diagnostics", "ragq.tasks.ingest", "ragq.tasks.search", "ragq.tasks.flow",
    "ragq.tasks.webhooks",
]


def create_app(settings: Settings, *, include_tasks: bool = True) -> Celery:
    """A Celery app configured from ``settings``; ``include_tasks`` for worker processes."""
    app = Celery("ragq", include=TASK_MODULES if include_tasks else [])
    app.conf.update(celery_config(settings, effective_broker_url(settings)))
    app.conf.ragq_settings = settings
    return app


def settings_of(app: Celery) -> Settings:
    """The settings an app was created with (tasks read them from their own app)."""
    settings: Settings = app.conf.ragq_settings
    return settings


app = create_app(build_settings())
