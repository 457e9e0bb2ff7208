"""The job flow in one process, without a broker: for fast tests and benches.

The same :class:`~ragq.tasks.runner.Runner` the Celery tasks use runs every step; what the
workers would send becomes a local queue: a job-level step waits its turn, a layer runs each
sub-query's pipeline to its end, then its ``after_layer``. A step that raises fails its job, as
the Celery task's failure handler does.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragq.caches.local import DisabledEvidenceCache, DisabledPlanCache
from ragq.orchestration.flow import Event, LayerDone, RetrieveDue, StepFailed
from ragq.schemas.tasks import Task
from ragq.schemas.ticket import Priority
from ragq.tasks.runner import EVENTS, Runner
from ragq.tasks.turns import StepTurns
from ragq.tasks.work import QueryVectors

log = logging.getLogger(__name__)


@dataclass
class InlineAdapters:
    """The adapters of a run in one process (:class:`ragq.tasks.work.Adapters`), given rather
    than built from settings; caches off unless given."""

    provider: Any
    embedder: Any
    vector_store: Any
    evidence_cache: Any = field(default_factory=DisabledEvidenceCache)
    plan_cache: Any = field(default_factory=DisabledPlanCache)
    query_vectors: QueryVectors = field(init=False)
    step_turns: StepTurns = field(default_factory=lambda: StepTurns(None))

    def __post_init__(self) -> None:
        self.query_vectors = QueryVectors(self.embedder)


@dataclass
class InlineDispatcher:
    """Runs what a step sends, in this process. ``sent`` lists every dispatch in order (task
    name and arguments, the job id first), for tests that check what a flow enqueued, and
    ``priorities`` the priority each job-level step and layer was sent with (task name, job
    id, priority)."""

    runner: Runner
    sent: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    webhooks: list[str] = field(default_factory=list)
    priorities: list[tuple[str, str, Priority]] = field(default_factory=list)
    _queue: deque[Callable[[], object]] = field(default_factory=deque)

    def enqueue(self, job_id: str, task: str, args: Sequence[Any],
                priority: Priority = Priority.BULK) -> None:
        self.sent.append((task, (job_id, *args)))
        self.priorities.append((task, job_id, priority))
        event = EVENTS[task](*args)
        self._queue.append(lambda: self._step(job_id, event))

    def enqueue_layer(self, job_id: str, round_: int, layer: int, indexes: Sequence[int],
                      priority: Priority = Priority.BULK) -> None:
        self.sent.append((Task.AFTER_LAYER, (job_id, round_, layer, tuple(indexes))))
        self.priorities.append((Task.AFTER_LAYER, job_id, priority))
        self._queue.append(lambda: self._layer(job_id, round_, layer, indexes))

    def send_webhooks(self, webhook_ids: Sequence[str]) -> None:
        self.webhooks.extend(webhook_ids)

    def run(self, job_id: str) -> None:
        """Run the job from its first step until nothing is left to do."""
        self.enqueue(job_id, Task.ROUTE, ())
        self.drain()

    def drain(self) -> None:
        """Run what was sent, and what that sends, until nothing is left to do."""
        while self._queue:
            self._queue.popleft()()

    def _layer(self, job_id: str, round_: int, layer: int, indexes: Sequence[int]) -> None:
        """Every pipeline of the layer to its end, then the layer's chord body."""
        for index in indexes:
            self._pipeline(job_id, RetrieveDue(round_, index))
        self._step(job_id, LayerDone(round_, layer))

    def _pipeline(self, job_id: str, event: Event) -> None:
        """One sub-query's pipeline: retrieve, check, and the retrieves its rewrites ask for."""
        current: Event | None = event
        while current is not None:
            outcome = self._step(job_id, current)
            current = None
            if outcome is not None and outcome.then is not None:
                self.sent.append((outcome.then.task, (job_id, *outcome.then.args)))
                current = EVENTS[outcome.then.task](*outcome.then.args)

    def _step(self, job_id: str, event: Event) -> Any:
        try:
            return self.runner.run(job_id, event, self)
        except Exception as exc:  # a step that fails fails its job, as in the workers
            log.warning("job=%s step %s failed: %s", job_id, type(event).__name__, exc)
            error = {"type": type(exc).__name__, "message": str(exc),
                     "step": type(event).__name__}
            self.runner.run(job_id, StepFailed(error), self)
            return None
