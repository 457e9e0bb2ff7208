"""How a task reaches its process's settings and adapters: through its Celery app, which the
composition root (:func:`ragq.workers.app.create_app`) hands them, so no task imports the
workers and nothing is a global."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ragq.settings import Settings
from ragq.tasks.work import Adapters

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from ragq.tasks.runner import Runner
    from ragq.webhooks import WebhookSender


class Resources(Adapters, Protocol):
    """What a worker process holds for its tasks, each built once, on first use."""

    @property
    def engine(self) -> Engine: ...

    @property
    def runner(self) -> Runner: ...

    @property
    def webhook_sender(self) -> WebhookSender: ...


def settings(task: Any) -> Settings:
    """The settings of the app the task runs in."""
    value: Settings = task.app.conf.ragq_settings
    return value


def resources(task: Any) -> Resources:
    """The adapters of the process the task runs in."""
    value: Resources = task.app.conf.ragq_resources
    return value
