"""Every Celery task of ragq and the queue it runs on, in one table.

A task's full name is ``ragq.<queue>.<name>``: the queue is part of the name, so Flower shows
where a task ran and the router needs no second table. Front doors, the flow's decisions and the
workers all address tasks through :class:`Task`, never by spelling a name.
"""

from __future__ import annotations

from enum import StrEnum

from ragq.schemas.ticket import Priority


class Queue(StrEnum):
    """The queues ragq declares, one per kind of work, so a deployment can scale each apart:
    model calls are slow and I/O bound, retrieval needs the vector store (in the embedded
    topology only its owner may serve it), ingest is bulk work that must not starve retrieval,
    bookkeeping is small and fast."""

    MODELS = "models"
    RETRIEVAL = "retrieval"
    INGEST = "ingest"
    BOOKKEEPING = "bookkeeping"


class Task:
    """Every task, by its full Celery name.

    Plain strings, not an enum: Celery takes any object with a ``name`` attribute for a task
    class, and an enum member has one."""

    # the job flow (docs/architecture.md)
    ROUTE = "ragq.models.route"
    PLAN = "ragq.models.plan"
    RETRIEVE = "ragq.retrieval.retrieve"
    CHECK = "ragq.models.check"
    AFTER_LAYER = "ragq.bookkeeping.after_layer"
    VERIFY = "ragq.models.verify"
    SYNTHESIZE = "ragq.models.synthesize"
    FINALIZE = "ragq.bookkeeping.finalize"
    # webhooks
    DELIVER_WEBHOOK = "ragq.bookkeeping.deliver_webhook"
    # ingest and direct searches
    INGEST_DOCUMENTS = "ragq.ingest.documents"
    FINISH_INGEST = "ragq.bookkeeping.finish_ingest"
    SEARCH = "ragq.retrieval.search"
    SEARCH_BATCH = "ragq.retrieval.search_batch"
    COUNT = "ragq.retrieval.count"
    # diagnostics: prove a queue is served end to end
    ECHO = "ragq.bookkeeping.echo"
    ECHO_RETRIEVAL = "ragq.retrieval.echo"
    GATHER = "ragq.bookkeeping.gather"

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every task name of the table."""
        return tuple(v for k, v in vars(cls).items() if k.isupper())


def task_queue(name: str) -> Queue:
    """The queue a task name routes to (its second part); ValueError outside the scheme."""
    parts = name.split(".")
    if len(parts) < 3 or parts[0] != "ragq":
        raise ValueError(f"task name {name!r} is not of the form ragq.<queue>.<name>")
    try:
        return Queue(parts[1])
    except ValueError as exc:
        valid = ", ".join(q.value for q in Queue)
        raise ValueError(f"task name {name!r} names no queue; valid queues: {valid}") from exc


#: Queues that touch the vector store; in the embedded topology only its owner consumes them.
VECTOR_QUEUES: tuple[Queue, ...] = (Queue.RETRIEVAL, Queue.INGEST)
#: Queues any worker may consume.
GENERAL_QUEUES: tuple[Queue, ...] = (Queue.MODELS, Queue.BOOKKEEPING)


#: The highest message priority a queue takes (RabbitMQ's ``x-max-priority``): an
#: interactive job's steps are sent with it, so workers take them before a bulk backlog's
#: (docs/fair-share.md#priority).
MAX_PRIORITY = 9
#: A bulk job's steps, and every message that is no job's step (ingest, webhooks, searches).
BULK_PRIORITY = 0


def message_priority(priority: Priority) -> int:
    """The broker priority of a job's step messages from the job's priority: the highest for
    interactive, the lowest for bulk."""
    return MAX_PRIORITY if priority == Priority.INTERACTIVE else BULK_PRIORITY
