"""The job flow's Celery tasks (docs/architecture.md): each starts one step of the runner
with its event and does nothing else.

route -> plan -> per layer a chord of [retrieve -> check (-> retrieve …)] -> after_layer ->
verify (-> follow-up chords) -> synthesize, which ends the job. A pipeline hop in a chord
*replaces* its task with the next, so the layer's chord waits for whole pipelines and no task
waits on another. A layer of one sub-query is its pipeline alone: each hop sends the next, and
the last ends the layer.

Only the pipelines' tasks (retrieve, check) of a chord store a result: the chord collects them.
Nobody waits on the others (a job is followed in the ledger), so their results are never
written.
"""

from __future__ import annotations

import logging
from typing import Any

from amqp.exceptions import RecoverableConnectionError
from celery import Celery, shared_task
from celery import Task as CeleryTask
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ragq.ledger.errors import LedgerUnavailableError
from ragq.orchestration.flow import (
    CheckDue,
    Event,
    JobStarted,
    LayerDone,
    PlanDue,
    RetrieveDue,
    StepFailed,
    SynthesizeDue,
    VerifyDue,
)
from ragq.schemas.tasks import MAX_PRIORITY, Queue, Task
from ragq.tasks.dispatch import CeleryDispatcher, consumed_queues, pipeline_signature
from ragq.tasks.runner import EVENTS, Runner
from ragq.tasks.runtime import Resources, resources
from ragq.tasks.turns import StepTurns

log = logging.getLogger(__name__)

#: At most this many job-level steps run in place after a task's own, so one task never holds
#: a job for longer than a few model calls (each step makes at most one or two).
IN_PLACE_STEPS = 2

#: The broker or the result backend out of reach mid-step (killed, restarting, a connection
#: reset): the step's work is either committed in the ledger or not, and the message that
#: would hand the job on, or the chord's count of it, is what was lost. That is the sweeper's
#: case (:mod:`ragq.workers.sweeper`), not a failure of the job: seen once in ten SIGKILLs of
#: the embedded Valkey, a check step whose reply to its chord was cut off failed its job.
OUTAGES: tuple[type[BaseException], ...] = (
    RedisConnectionError, RedisTimeoutError, OperationalError, RecoverableConnectionError,
    ConnectionError)


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says the broker or result backend was out of reach, not that the step
    went wrong (:data:`OUTAGES`)."""
    return isinstance(exc, OUTAGES)


class FlowTask(CeleryTask):
    """Base of the flow's tasks: run one step; a step that fails for good fails its job, one
    cut off from its broker or result backend (:data:`OUTAGES`) leaves it to the sweeper.

    A ledger that is out of reach for a while (no connection free in time under a burst of
    steps, a database restarting) is not a failure of the job: its step ran in one transaction
    that did not commit, so it is sent again later, with backoff (about a minute in all),
    before it counts as failed. Seen: one job of a 1,500-ticket backlog failed so with a
    256-thread I/O pool on 15 SQLite connections.
    """

    abstract = True
    autoretry_for = (LedgerUnavailableError,)
    retry_backoff = 2
    retry_backoff_max = 30
    retry_jitter = True
    max_retries = 6

    def step(self, job_id: str, event: Event, *, layer: int | None = None
             ) -> dict[str, Any] | None:
        """Run the step; hand the pipeline on (replacing this task) or reply to the chord.

        A job-level step (route, plan, after_layer, verify) runs the job-level step it hands
        on to in place when this worker consumes that step's queue, up to
        :data:`IN_PLACE_STEPS` of them: route -> plan and after_layer -> verify -> synthesize
        cost no broker round trip. A pipeline whose layer has no other sub-query (``layer``,
        see :func:`ragq.tasks.dispatch.pipeline_signature`) has no chord to reply to: its last
        hop ends the layer itself, in place or sent. Were the worker to die meanwhile, this
        task's message is delivered again (acks late) and decides again from the ledger, which
        sends the same next step again; and the supervisor resumes a job whose recorded next
        step nothing carries (:mod:`ragq.workers.stalls`). The step runs on one of its
        process's turns (:func:`step_turns`), ahead of the bulk steps waiting for one when its
        message came with the interactive priority."""
        process = resources(self)
        priority = (self.request.delivery_info or {}).get("priority")
        with step_turns(self.app, process).step(first=priority == MAX_PRIORITY):
            return self._step(process.runner, job_id, event, layer)

    def _step(self, runner: Runner, job_id: str, event: Event, layer: int | None
              ) -> dict[str, Any] | None:
        in_pipeline = isinstance(event, RetrieveDue | CheckDue)
        dispatcher = CeleryDispatcher(self.app, keep_for=None if in_pipeline else job_id)
        outcome = runner.run(job_id, event, dispatcher)
        in_place = IN_PLACE_STEPS
        if layer is not None and outcome.then is None and isinstance(event, RetrieveDue | CheckDue):
            dispatcher = CeleryDispatcher(self.app, keep_for=job_id)
            dispatcher.enqueue(job_id, Task.AFTER_LAYER, (event.round, layer), outcome.priority)
            in_place += 1  # the layer's end is the chord body's task, which ran IN_PLACE_STEPS
        for _ in range(in_place):
            if (kept := dispatcher.take_local()) is None:
                break
            task, args = kept
            log.debug("job=%s runs %s in place", job_id, task)
            outcome = runner.run(job_id, EVENTS[task](*args), dispatcher)
        dispatcher.send_kept()
        if outcome.then is not None:
            then = outcome.then
            hop = pipeline_signature(self.app, then.task, job_id, then.args, layer,
                                     outcome.priority)
            if layer is None:  # a chord waits on this task's id: the next hop takes its place
                raise self.replace(hop)
            # A lone pipeline has no chord to keep a place in, so its next hop is simply sent.
            # Task.replace raises Ignore, and Celery formats a traceback for every Ignore: a
            # seventh of the retrieval worker's CPU went there.
            hop.apply_async()
            return None
        return dict(outcome.reply) if outcome.reply is not None else None

    def on_failure(self, exc: BaseException, task_id: str, args: tuple[Any, ...],
                   kwargs: dict[str, Any], einfo: Any) -> None:
        job_id = kwargs.get("job_id") or (args[0] if args else None)
        if not isinstance(job_id, str):
            return
        if is_outage(exc):
            log.warning("job=%s: %s lost its broker or result backend (%s: %s); the job stays "
                        "open and the sweeper resumes it", job_id, self.name,
                        type(exc).__name__, exc)
            return
        log.error("job=%s failed in %s: %s", job_id, self.name, exc)
        error = {"type": type(exc).__name__, "message": str(exc), "step": self.name}
        resources(self).runner.run(job_id, StepFailed(error), CeleryDispatcher(self.app))


def step_turns(app: Celery, process: Resources) -> StepTurns:
    """The turns a flow step of this worker takes (:mod:`ragq.tasks.turns`): its process's
    when the worker serves model calls (the I/O pool: hundreds of threads), none otherwise.
    The CPU pool's threads are the cores already, and the heavy parts of its steps (embedding,
    the engine's search, SQLite) release the GIL: on one turn, 64 jobs at 200 ms took 3.40 s
    against 3.22 s on none (alternating runs)."""
    if Queue.MODELS.value in consumed_queues(app):
        return process.step_turns
    return StepTurns(None)


@shared_task(base=FlowTask, name=Task.ROUTE, bind=True, ignore_result=True)
def route(self: FlowTask, job_id: str) -> dict[str, Any] | None:
    """Classify the question (unless the ticket fixed the route) and start its path (C3)."""
    return self.step(job_id, JobStarted())


@shared_task(base=FlowTask, name=Task.PLAN, bind=True, ignore_result=True)
def plan(self: FlowTask, job_id: str) -> dict[str, Any] | None:
    """Decompose into a DAG of sub-queries, validate it, launch its first layer (C4, C5)."""
    return self.step(job_id, PlanDue())


@shared_task(base=FlowTask, name=Task.RETRIEVE, bind=True)
def retrieve(self: FlowTask, job_id: str, round_: int, index: int, attempt: int = 0,
             text: str | None = None, layer: int | None = None) -> dict[str, Any] | None:
    """Search for one attempt of sub-query (round, index), or answer it from the ledger or the
    evidence cache (C6, C12)."""
    return self.step(job_id, RetrieveDue(round_, index, attempt, text), layer=layer)


@shared_task(base=FlowTask, name=Task.CHECK, bind=True)
def check(self: FlowTask, job_id: str, round_: int, index: int,
          attempt: int, layer: int | None = None) -> dict[str, Any] | None:
    """Sufficiency check of one attempt; rewrite and search again, or settle (C7)."""
    return self.step(job_id, CheckDue(round_, index, attempt), layer=layer)


@shared_task(base=FlowTask, name=Task.AFTER_LAYER, bind=True, ignore_result=True)
def after_layer(self: FlowTask, results: list[dict[str, Any]], job_id: str, round_: int,
                layer: int) -> dict[str, Any] | None:
    """Chord body: the next layer, verification, or the answer."""
    return self.step(job_id, LayerDone(round_, layer))


@shared_task(base=FlowTask, name=Task.VERIFY, bind=True, ignore_result=True)
def verify(self: FlowTask, job_id: str, round_: int) -> dict[str, Any] | None:
    """Judge the evidence so far; follow up with a new round, or answer (C8)."""
    return self.step(job_id, VerifyDue(round_))


@shared_task(base=FlowTask, name=Task.SYNTHESIZE, bind=True, ignore_result=True)
def synthesize(self: FlowTask, job_id: str, stop_reason: str) -> dict[str, Any] | None:
    """Assemble the context, answer with citations, end the job (C11)."""
    return self.step(job_id, SynthesizeDue(stop_reason))
