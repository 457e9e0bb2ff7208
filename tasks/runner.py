"""The step runner: load the job's snapshot, ask ``orchestration.flow.decide``, apply the ledger
writes in one transaction (its charges included), then do the work and send the messages.

The work's answer is the step's next event, decided the same way, until a decision ends in
messages only. Nothing here knows Celery: a :class:`Dispatcher` sends what comes next (Celery in
the workers, a queue in process for tests and benches), and what a pipeline hands on or replies
comes back as a :class:`StepOutcome`.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ragq.ledger.ports import FlowLedger
from ragq.orchestration.cache_check import evidence_entry
from ragq.orchestration.flow import (
    LEDGER_WRITES,
    WORK,
    Action,
    CacheEvidence,
    CachePlan,
    Charge,
    CheckDue,
    Continue,
    DropCachedEvidence,
    Enqueue,
    EnqueueLayer,
    Event,
    FlowConfig,
    JobStarted,
    JobState,
    LayerDone,
    PlanDue,
    Refused,
    Reply,
    RetrieveDue,
    RoleFailed,
    SendWebhooks,
    StartWaiting,
    SynthesizeDue,
    VerifyDue,
    carry_over,
    decide,
)
from ragq.schemas.tasks import Task
from ragq.schemas.ticket import Priority
from ragq.tasks.work import Adapters, perform

log = logging.getLogger(__name__)

#: The event each flow task starts its step with; the task's arguments after the job id are
#: the event's fields, in order.
EVENTS: dict[str, Callable[..., Event]] = {
    Task.ROUTE: JobStarted,
    Task.PLAN: PlanDue,
    Task.RETRIEVE: RetrieveDue,
    Task.CHECK: CheckDue,
    Task.AFTER_LAYER: LayerDone,
    Task.VERIFY: VerifyDue,
    Task.SYNTHESIZE: SynthesizeDue,
}


class Dispatcher(Protocol):
    """Sends what comes after a step."""

    def enqueue(self, job_id: str, task: str, args: Sequence[Any],
                priority: Priority = Priority.BULK) -> None:
        """Send a job-level step, ahead of bulk jobs' when ``priority`` is interactive."""
        ...

    def enqueue_layer(self, job_id: str, round_: int, layer: int, indexes: Sequence[int],
                      priority: Priority = Priority.BULK) -> None:
        """Send one layer: each sub-query's pipeline in parallel, then ``after_layer``."""
        ...

    def send_webhooks(self, webhook_ids: Sequence[str]) -> None:
        """Send the first attempt of each webhook event."""
        ...


@dataclass
class StepOutcome:
    """What a task hands back: the pipeline's reply to its chord, or the next hop of the
    pipeline, which takes the task's place (sent with the job's ``priority``)."""

    reply: Mapping[str, Any] | None = None
    then: Continue | None = None
    priority: Priority = Priority.BULK


@dataclass(frozen=True)
class Runner:
    """Runs steps against one ledger and one set of adapters (built once per process)."""

    ledger: FlowLedger
    adapters: Adapters
    config: FlowConfig

    def run(self, job_id: str, event: Event, dispatcher: Dispatcher) -> StepOutcome:
        """Handle ``event`` and every event the work it calls for produces."""
        outcome = StepOutcome()
        current = event
        state = self.ledger.snapshot(job_id, self.config)
        outcome.priority = state.priority
        while True:
            actions = decide(state, current)
            effects = self.apply(state, current, actions)
            if isinstance(current, RoleFailed):
                raise current.error
            answered: Event | None = None
            for effect in effects:
                if isinstance(effect, WORK):
                    answered = self.perform(effect, state)
                else:
                    self._send(effect, state, dispatcher, outcome)
            if answered is None:
                return outcome
            current, state = answered, self._next_state(state, actions)

    def _next_state(self, state: JobState, actions: Sequence[Action]) -> JobState:
        """The job as the step's writes left it: carried over with its status and budget read
        again when those writes allow (:mod:`ragq.orchestration.flow.carry`), else read whole.
        A refused charge (this step's or another's) always reads it whole: the refusal's own
        decision wrote more than ``actions`` say."""
        carried = carry_over(state, actions) if state.first_refused is None else None
        if carried is not None:
            fresh = self.ledger.refresh(carried)
            if fresh.first_refused is None:
                return fresh
        return self.ledger.snapshot(state.job_id, self.config)

    def perform(self, work: Action, state: JobState) -> Event:
        """Do one piece of work (already paid for); its answer is the next event."""
        return perform(work, state, self.ledger, self.adapters)

    def apply(self, state: JobState, event: Event, actions: Sequence[Action]) -> list[Action]:
        """Apply the ledger writes of ``actions`` in one transaction; return the effects. A
        refused charge drops what follows it and asks the flow again (same transaction)."""
        if not any(isinstance(a, LEDGER_WRITES) for a in actions):
            return list(actions)
        effects: list[Action] = []
        pending = deque(actions)
        with self.ledger.transaction() as tx:
            while pending:
                action = pending.popleft()
                if not isinstance(action, LEDGER_WRITES):
                    effects.append(action)
                    continue
                refused = tx.write(state.job_id, action)
                if refused is not None and isinstance(action, Charge):
                    log.info("job=%s charge %s refused on %s", state.job_id, action.key,
                             refused.value)
                    refusal = Refused(refused, action, event, tuple(pending))
                    pending = deque(decide(state, refusal))
        return effects

    def _start_waiting(self, job_id: str, dispatcher: Dispatcher) -> None:
        """Send the route step of each job the ending made room for. A ledger that cannot
        claim now does not fail the job that ended: the next ending, a submission or the
        supervisor's sweep claims the place."""
        try:
            claimed = self.ledger.claim_next()
        except Exception as exc:
            log.warning("job=%s ended; starting the next waiting jobs failed: %s", job_id, exc)
            return
        for waiting in claimed:
            dispatcher.enqueue(waiting.job_id, Task.ROUTE, (), waiting.priority)
        if claimed:
            log.info("job=%s ended; started %d waiting job(s)", job_id, len(claimed))

    def _send(self, effect: Action, state: JobState, dispatcher: Dispatcher,
              outcome: StepOutcome) -> None:
        adapters = self.adapters
        match effect:
            case Enqueue(task=task, args=args):
                dispatcher.enqueue(state.job_id, task, args, state.priority)
            case EnqueueLayer(round=round_, layer=layer, indexes=indexes):
                dispatcher.enqueue_layer(state.job_id, round_, layer, indexes, state.priority)
            case Continue():
                outcome.then = effect
            case Reply(value=value):
                outcome.reply = dict(value)
            case SendWebhooks():
                dispatcher.send_webhooks(self.ledger.pending_webhooks(state.job_id))
            case StartWaiting():
                self._start_waiting(state.job_id, dispatcher)
            case CachePlan(question=question, plan=plan, max_sub_queries=limit):
                adapters.plan_cache.put(question, plan, provider=adapters.provider.name,
                                        max_sub_queries=limit)
            case CacheEvidence(key=key, hits=hits, acl=acl, collection=collection):
                adapters.evidence_cache.put(collection or state.collection, key,
                                            evidence_entry(list(hits), requester_acl=acl))
            case DropCachedEvidence(key=key, reason=reason, collection=collection):
                log.info("job=%s evidence cache entry refused: %s", state.job_id, reason)
                adapters.evidence_cache.delete(collection or state.collection, key)
            case _:
                raise TypeError(f"job {state.job_id}: no way to send {effect!r}")
