"""Queues by kind of work, and how task names map onto them.

Work is split so a deployment can scale each kind apart: model calls are slow and I/O bound,
retrieval needs the vector store (in the embedded topology, only the process that owns it may
serve it), ingest is bulk work that must not starve retrieval, bookkeeping is small and fast.
"""

from __future__ import annotations

from enum import StrEnum


class Queue(StrEnum):
    """The queues ragq declares; task names start with ``ragq.<queue>.``."""

    MODELS = "models"
    RETRIEVAL = "retrieval"
    INGEST = "ingest"
    BOOKKEEPING = "bookkeeping"


#: Queues that touch the vector store; in the embedded topology only the owner consumes them.
VECTOR_QUEUES: tuple[Queue, ...] = (Queue.RETRIEVAL, Queue.INGEST)
#: Queues any worker may consume.
GENERAL_QUEUES: tuple[Queue, ...] = (Queue.MODELS, Queue.BOOKKEEPING)


def task_name(queue: Queue, name: str) -> str:
    """The full Celery name of a task; its prefix routes it to ``queue``."""
    return f"ragq.{queue.value}.{name}"


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
