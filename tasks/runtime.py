"""How a task reaches its process's adapters and settings, without importing globals."""

from __future__ import annotations

from typing import Any

from celery.signals import worker_process_shutdown, worker_shutdown

from ragq.settings import Settings
from ragq.workers.app import settings_of
from ragq.workers.resources import WorkerResources, close_all, resources_for


def settings(task: Any) -> Settings:
    """The settings of the app the task runs in."""
    return settings_of(task.app)


def resources(task: Any) -> WorkerResources:
    """The adapters of the process the task runs in, built on first use."""
    return resources_for(settings(task))


@worker_shutdown.connect
@worker_process_shutdown.connect
def _close_resources(**_: object) -> None:
    """Flush and unlock the vector store before the process exits, so the next owner can open it."""
    close_all()
