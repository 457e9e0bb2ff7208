"""What every step of a job shares: loading the job, recording model calls, and failing the job
cleanly when a step raises (so no job is left waiting on a chord that will never fire)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from celery import Task

from ragq.errors import BudgetExhaustedError, ProviderError
from ragq.ledger import (
    JobStatus,
    finish_job,
    get_job,
    record_model_call,
    session_scope,
    set_job_status,
)
from ragq.ledger.results import build_result
from ragq.schemas.flow import Evidence, Usage
from ragq.schemas.statuses import TERMINAL_JOB_STATUSES, BudgetDimension
from ragq.settings import Settings
from ragq.tasks.budget_guard import charge, settle_model_call
from ragq.workers.app import settings_of
from ragq.workers.resources import WorkerResources, resources_for

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class JobView:
    """The immutable facts of a job a step needs."""

    id: str
    question: str
    collection: str
    acl: tuple[str, ...]
    route: str | None
    meta: dict[str, Any]


def to_evidence(row: Any, sub_query_index: int | None = None) -> Evidence:
    """A ledger evidence row as the model roles read it."""
    return Evidence(chunk_id=row.chunk_id, doc_id=row.doc_id, title=row.title or "",
                    text=row.text, score=row.score, source_version=row.source_version,
                    authority_tier=row.authority_tier, sub_query_index=sub_query_index)


class FlowTask(Task):  # type: ignore[misc]
    """Base of the job-flow tasks; ``args[0]`` is always the job id."""

    abstract = True

    @property
    def settings(self) -> Settings:
        return settings_of(self.app)

    @property
    def res(self) -> WorkerResources:
        return resources_for(self.settings)

    def open_job(self, job_id: str, status: JobStatus | None = None) -> JobView | None:
        """The job, moved to ``status``; None when it already ended (cancelled, failed), which
        means: do nothing and enqueue nothing."""
        with session_scope(self.res.engine) as session:
            job = get_job(session, job_id=job_id)
            if job.status in TERMINAL_JOB_STATUSES:
                log.info("job=%s already %s; step %s does nothing", job_id, job.status, self.name)
                return None
            if status is not None and job.status != status:
                set_job_status(session, job_id=job_id, status=status)
            return JobView(job.id, job.question, job.collection, tuple(job.acl), job.route,
                           dict(job.meta or {}))

    def model_call(self, job_id: str, role: str, call_key: str,
                   call: Callable[[], tuple[T, Usage]], *, reserve: int = 0) -> T:
        """Run one provider role and record it in the ledger: one row per attempt the provider
        reports (``{call_key}#{n}``), else one row for the call; once per key, so a redelivered
        task adds nothing. A :class:`ProviderError` is recorded with its attempts, then raised.

        Before the call a step and ``reserve`` tokens (the caller's estimate of the prompt) are
        charged; :class:`BudgetExhaustedError` when they do not fit. What the call really spent
        beyond the reservation, and its cost, is settled after it."""
        refused = charge(self, job_id, f"{call_key}:pre", {
            BudgetDimension.STEPS: 1, BudgetDimension.LLM_TOKENS: reserve,
            BudgetDimension.COST_USD: 0}, step=role)
        if refused is not None:
            raise BudgetExhaustedError(refused.value)
        started = time.perf_counter()
        try:
            value, usage = call()
        except ProviderError as exc:
            if isinstance(exc.usage, Usage):
                self._record_usage(job_id, role, call_key, exc.usage, started)
                settle_model_call(self, job_id, call_key, exc.usage, step=role, reserved=reserve)
            raise
        self._record_usage(job_id, role, call_key, usage, started)
        settle_model_call(self, job_id, call_key, usage, step=role, reserved=reserve)
        return value

    def _record_usage(self, job_id: str, role: str, call_key: str, usage: Usage,
                      started: float) -> None:
        provider = self.res.provider.name
        with session_scope(self.res.engine) as session:
            if not usage.attempts:
                latency = usage.latency_ms or (time.perf_counter() - started) * 1000
                record_model_call(
                    session, job_id=job_id, role=role, provider=provider, model=usage.model,
                    call_key=call_key, prompt_tokens=usage.prompt_tokens,
                    completion_tokens=usage.completion_tokens, latency_ms=int(latency),
                    cost_usd=usage.cost_usd)
                return
            for n, a in enumerate(usage.attempts):
                record_model_call(
                    session, job_id=job_id, role=role, provider=provider, model=a.model,
                    call_key=f"{call_key}#{n}", prompt_tokens=a.prompt_tokens,
                    completion_tokens=a.completion_tokens, latency_ms=int(a.latency_ms),
                    status=a.status, error=a.error, attempt=n, cost_usd=a.cost_usd)

    def on_failure(self, exc: BaseException, task_id: str, args: tuple[Any, ...],
                   kwargs: dict[str, Any], einfo: Any) -> None:
        """A step that fails for good fails its job, with the error, and ends it."""
        job_id = kwargs.get("job_id") or (args[0] if args else None)
        if not isinstance(job_id, str):
            return
        error = {"type": type(exc).__name__, "message": str(exc), "step": self.name}
        log.error("job=%s failed in %s: %s", job_id, self.name, exc)
        with session_scope(self.res.engine) as session:
            result = build_result(session, job_id=job_id, status=JobStatus.FAILED, error=error)
            finish_job(session, job_id=job_id, status=JobStatus.FAILED, result=result,
                       stop_reason="error", error=error)
        from ragq.tasks.webhooks import enqueue_webhooks

        enqueue_webhooks(self.app, self.res.engine, job_id=job_id)
