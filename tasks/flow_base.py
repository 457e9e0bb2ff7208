"""What every step of a job shares: loading the job, recording model calls, and failing the job
cleanly when a step raises (so no job is left waiting on a chord that will never fire)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from celery import Task

from ledger import (
    JobStatus,
    finish_job,
    get_job,
    record_model_call,
    session_scope,
    set_job_status,
)
from ledger.results import build_result
from ragq.settings import Settings
from schemas.flow import Evidence, Usage
from schemas.statuses import TERMINAL_JOB_STATUSES
from workers.app import settings_of
from workers.resources import WorkerResources, resources_for

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
                   call: Callable[[], tuple[T, Usage]]) -> T:
        """Run one provider role and record it in the ledger (once per ``call_key``)."""
        started = time.perf_counter()
        value, usage = call()
        latency = usage.latency_ms or (time.perf_counter() - started) * 1000
        with session_scope(self.res.engine) as session:
            record_model_call(
                session, job_id=job_id, role=role, provider=self.res.provider.name,
                model=usage.model, call_key=call_key, prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens, latency_ms=int(latency),
            )
        return value

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
