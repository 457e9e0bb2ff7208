"""How task names map onto queues: Celery's router over the table in :mod:`ragq.schemas.tasks`."""

from __future__ import annotations

from ragq.schemas.tasks import GENERAL_QUEUES, VECTOR_QUEUES, Queue, Task, task_queue

__all__ = ["GENERAL_QUEUES", "VECTOR_QUEUES", "Queue", "Task", "route_task"]


def route_task(name: str, args: object, kwargs: object, options: object, task: object = None,
               **kw: object) -> dict[str, str] | None:
    """Celery router: send each ragq task to the queue its name starts with; Celery's own tasks
    (``celery.*``) go to the default queue."""
    if not name.startswith("ragq."):
        return None
    return {"queue": task_queue(name).value}
