"""Every Celery task of ragq and the queue it runs on, in one table.

A task's full name is ``ragq.<queue>.<name>``: the queue is part of the name, so Flower shows
where a task ran and the router needs no second table. Front doors, the flow's decisions and the
workers all address tasks through :class:`Task`, never by spelling a name.
"""

from __future__ import annotations

from enum import StrEnum


class Queue(StrEnum):
    """The queues ragq declares, one per kind of work, so a deployment can scale each apart:
    model calls are slow and I/O bound, retrieval needs the vector store (in the embedded
    topology only its owner may serve it), ingest is bulk work that must not starve retrieval,
    bookkeeping is small and fast."""

    MODELS = "models"
    RETRIEVAL = "retrieval"
    INGEST = "ingest"
    BOOKKEEPING = "bookkeeping"


class Task(StrEnum):
    """Every task, by its full Celery name."""

    # the job flow (SPEC "The life of a job")
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

    @property
    def queue(self) -> Queue:
        """The queue the task is routed to (the second part of its name)."""
        return Queue(self.value.split(".")[1])


#: Queues that touch the vector store; in the embedded topology only its owner consumes them.
VECTOR_QUEUES: tuple[Queue, ...] = (Queue.RETRIEVAL, Queue.INGEST)
#: Queues any worker may consume.
GENERAL_QUEUES: tuple[Queue, ...] = (Queue.MODELS, Queue.BOOKKEEPING)
