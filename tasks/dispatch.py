"""What a flow step sends, as Celery messages: job-level steps by name, a layer as a chord of
sub-query pipelines ending in ``after_layer`` (a layer of one sub-query as its pipeline alone,
which runs the layer's end itself), webhook attempts (the one place they are sent). Tasks are
addressed by name, so no task module is imported here.

Every step message of a job carries the broker priority of the job's priority
(:func:`ragq.schemas.tasks.message_priority`): workers take an interactive job's steps before
the bulk backlog's already queued (docs/fair-share.md#priority)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from celery import Celery, chord
from celery.canvas import Signature

from ragq.orchestration.flow import Enqueue, EnqueueLayer
from ragq.schemas.tasks import Task, message_priority, task_queue
from ragq.schemas.ticket import Priority

#: The keyword a pipeline's tasks carry when their layer has no other sub-query: the layer's
#: number, so the pipeline's last task ends the layer itself, without a chord.
SOLO_LAYER = "layer"


def step_signature(app: Celery, task: str, job_id: str, args: Sequence[Any] = (),
                   priority: Priority = Priority.BULK) -> Signature:
    """A flow step by name (immutable: it ignores a parent's result), with its job's broker
    priority. ``after_layer`` outside a chord gets an empty list for the replies a chord would
    have given it."""
    options = {"priority": message_priority(priority)}
    if task == Task.AFTER_LAYER:
        round_, layer = args
        return app.signature(task, args=([],), immutable=True, options=options,
                             kwargs={"job_id": job_id, "round_": round_, "layer": layer})
    return app.signature(task, args=(job_id, *args), immutable=True, options=options)


def pipeline_signature(app: Celery, task: str, job_id: str, args: Sequence[Any],
                       solo_layer: int | None, priority: Priority = Priority.BULK
                       ) -> Signature:
    """A hop of a sub-query's pipeline. In a layer of its own (``solo_layer``) nothing collects
    its reply, so none is stored: the result backend sees no traffic for it."""
    if solo_layer is None:
        return step_signature(app, task, job_id, args, priority)
    return app.signature(task, args=(job_id, *args), kwargs={SOLO_LAYER: solo_layer},
                         immutable=True, ignore_result=True,
                         options={"priority": message_priority(priority)})


class CeleryDispatcher:
    """:class:`ragq.tasks.runner.Dispatcher` over a Celery app.

    ``keep_for``: the first job-level step of that job sent to a queue this worker consumes is
    kept (see :meth:`take_local`) instead of sent, so the task can run it in place: a hand-off
    through the broker that would only come back to this process costs a round trip and the
    CPU of a task, and buys nothing. Its message was recorded as the job's next step all the
    same. Steps of other jobs (an ending starts waiting jobs) are always sent."""

    def __init__(self, app: Celery, *, keep_for: str | None = None):
        self._app = app
        self._keep_for = keep_for
        self._local = consumed_queues(app) if keep_for else frozenset()
        self._kept: tuple[str, tuple[Any, ...]] | None = None
        self._kept_priority = Priority.BULK

    def enqueue(self, job_id: str, task: str, args: Sequence[Any],
                priority: Priority = Priority.BULK) -> None:
        if (self._kept is None and job_id == self._keep_for
                and task_queue(task).value in self._local):
            self._kept, self._kept_priority = (task, tuple(args)), priority
            return
        step_signature(self._app, task, job_id, args, priority).apply_async()

    def take_local(self) -> tuple[str, tuple[Any, ...]] | None:
        """The step kept to run in place (task name, arguments), at most once."""
        kept, self._kept = self._kept, None
        return kept

    def send_kept(self) -> None:
        """Send the kept step after all (the task will not run it in place)."""
        kept = self.take_local()
        if kept is not None and self._keep_for is not None:
            step_signature(self._app, kept[0], self._keep_for, kept[1],
                           self._kept_priority).apply_async()

    def enqueue_layer(self, job_id: str, round_: int, layer: int, indexes: Sequence[int],
                      priority: Priority = Priority.BULK) -> None:
        """A chord: every sub-query's pipeline in parallel, then ``after_layer`` once all
        ended. Raises ValueError for an empty layer, which a validated plan never has."""
        if not indexes:
            raise ValueError(f"job {job_id}: layer {layer} of round {round_} has no sub-queries")
        if len(indexes) == 1:
            # A chord of one waits on the result backend for a reply it already knows is the
            # last: the pipeline ends the layer itself (``FlowTask.step``).
            pipeline_signature(self._app, Task.RETRIEVE, job_id, (round_, indexes[0]),
                               layer, priority).apply_async()
            return
        header = [step_signature(self._app, Task.RETRIEVE, job_id, (round_, index), priority)
                  for index in indexes]
        body = self._app.signature(Task.AFTER_LAYER, kwargs={"job_id": job_id,
                                                             "round_": round_, "layer": layer},
                                   options={"priority": message_priority(priority)})
        chord(header, body).apply_async()

    def send_again(self, job_id: str, step: Enqueue | EnqueueLayer,
                   priority: Priority) -> None:
        """Send a step the ledger recorded as the job's next (``jobs.next_step``) again, with
        the job's broker priority: what both sweeps do for a job whose message was lost."""
        if isinstance(step, EnqueueLayer):
            self.enqueue_layer(job_id, step.round, step.layer, step.indexes, priority)
        else:
            self.enqueue(job_id, step.task, step.args, priority)

    def send_webhooks(self, webhook_ids: Sequence[str]) -> None:
        send_webhook_attempts(self._app, webhook_ids)


def consumed_queues(app: Celery) -> frozenset[str]:
    """The queues this process's worker consumes (every declared queue outside a worker, or
    for a worker started without ``-Q``)."""
    return frozenset(app.amqp.queues.consume_from)


def send_webhook_attempts(app: Celery, webhook_ids: Sequence[str]) -> int:
    """Hand attempt 1 of each event to the delivery task, over one producer (a cancelled
    5,000-job batch has as many events); returns how many were sent."""
    if not webhook_ids:
        return 0
    with app.producer_or_acquire() as producer:
        for webhook_id in webhook_ids:
            app.send_task(Task.DELIVER_WEBHOOK, args=(webhook_id, 1), producer=producer)
    return len(webhook_ids)
