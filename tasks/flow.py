"""The job flow's Celery tasks (SPEC "The life of a job"): each starts one step of the runner
with its event and does nothing else.

route -> plan -> per layer [retrieve -> check (-> retrieve …)] for each sub-query ->
after_layer -> verify (-> follow-up layers) -> synthesize, which ends the job. No task waits on
another: the step that ends a layer's last pipeline sends ``after_layer``, from what the ledger
says (not a Celery chord, whose counter in the result backend a broker restart or a redelivered
step can leave short or long for good).

Nobody waits on a task's result (a job is followed in the ledger), so none is stored.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task as CeleryTask
from celery import shared_task

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
from ragq.schemas.tasks import Task
from ragq.tasks.dispatch import CeleryDispatcher
from ragq.tasks.runtime import resources

log = logging.getLogger(__name__)


class FlowTask(CeleryTask):  # type: ignore[misc]
    """Base of the flow's tasks: run one step; a step that fails for good fails its job."""

    abstract = True

    def step(self, job_id: str, event: Event) -> None:
        """Run the step; what comes next is sent from inside it."""
        resources(self).runner.run(job_id, event, CeleryDispatcher(self.app))

    def on_failure(self, exc: BaseException, task_id: str, args: tuple[Any, ...],
                   kwargs: dict[str, Any], einfo: Any) -> None:
        job_id = kwargs.get("job_id") or (args[0] if args else None)
        if not isinstance(job_id, str):
            return
        log.error("job=%s failed in %s: %s", job_id, self.name, exc)
        error = {"type": type(exc).__name__, "message": str(exc), "step": self.name}
        resources(self).runner.run(job_id, StepFailed(error), CeleryDispatcher(self.app))


@shared_task(base=FlowTask, name=Task.ROUTE, bind=True, ignore_result=True)
def route(self: FlowTask, job_id: str) -> None:
    """Classify the question (unless the ticket fixed the route) and start its path (C3)."""
    return self.step(job_id, JobStarted())


@shared_task(base=FlowTask, name=Task.PLAN, bind=True, ignore_result=True)
def plan(self: FlowTask, job_id: str) -> None:
    """Decompose into a DAG of sub-queries, validate it, launch its first layer (C4, C5)."""
    return self.step(job_id, PlanDue())


@shared_task(base=FlowTask, name=Task.RETRIEVE, bind=True, ignore_result=True)
def retrieve(self: FlowTask, job_id: str, round_: int, index: int, attempt: int = 0,
             text: str | None = None) -> None:
    """Search for one attempt of sub-query (round, index), or answer it from the ledger or the
    evidence cache (C6, C12)."""
    return self.step(job_id, RetrieveDue(round_, index, attempt, text))


@shared_task(base=FlowTask, name=Task.CHECK, bind=True, ignore_result=True)
def check(self: FlowTask, job_id: str, round_: int, index: int,
          attempt: int) -> None:
    """Sufficiency check of one attempt; rewrite and search again, or settle (C7)."""
    return self.step(job_id, CheckDue(round_, index, attempt))


@shared_task(base=FlowTask, name=Task.AFTER_LAYER, bind=True, ignore_result=True)
def after_layer(self: FlowTask, job_id: str, round_: int, layer: int) -> None:
    """Every sub-query of the layer has ended: the next layer, verification, or the answer."""
    return self.step(job_id, LayerDone(round_, layer))


@shared_task(base=FlowTask, name=Task.VERIFY, bind=True, ignore_result=True)
def verify(self: FlowTask, job_id: str, round_: int) -> None:
    """Judge the evidence so far; follow up with a new round, or answer (C8)."""
    return self.step(job_id, VerifyDue(round_))


@shared_task(base=FlowTask, name=Task.SYNTHESIZE, bind=True, ignore_result=True)
def synthesize(self: FlowTask, job_id: str, stop_reason: str) -> None:
    """Assemble the context, answer with citations, end the job (C11)."""
    return self.step(job_id, SynthesizeDue(stop_reason))
