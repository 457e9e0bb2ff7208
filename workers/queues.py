"""How task names map onto queues: Celery's router over the table in :mod:`ragq.schemas.tasks`."""

from __future__ import annotations

from ragq.schemas.tasks import GENERAL_QUEUES, VECTOR_QUEUES, Queue, Task

__all__ = ["GENERAL_QUEUES", "VECTOR_QUEUES", "Queue", "Task", "queue_of", "route_task"]


def queue_of(name: str) -> Queue:
    """The queue a task name routes to; raises ValueError for a name outside the scheme."""
    parts = name.split(".")
    if len(parts) < 3 or parts[0] != "ragq":
        raise ValueError(f"task name {name!r} is not of the form ragq.<queue>.<name>")
    try:
        return Queue(parts[1])
    except ValueError as exc:
        valid = ", ".join(q.value for q in Queue)
        raise ValueError(f"task name {name!r} names no queue; valid queues: {valid}") from exc


def route_task(name: str, args: object, kwargs: object, options: object, task: object = None,
               **kw: object) -> dict[str, str] | None:
    """Celery router: send each ragq task to the queue its name starts with; Celery's own tasks
    (``celery.*``) go to the default queue."""
    if not name.startswith("ragq."):
        return None
    return {"queue": queue_of(name).value}
