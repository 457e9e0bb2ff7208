"""The flow's one entry point: ``decide(state, event) -> actions``.

A pure function of the job's snapshot and what just happened; variation by registry, not by
if-chains: each event type (and, for a model's answer, each role) has one handler. A job that
already ended decides nothing more, except to keep the truth about spend that already happened
and to let a pipeline tell its chord it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragq.orchestration.flow import answer, check, retrieve, rounds, start
from ragq.orchestration.flow.actions import (
    LEDGER_WRITES,
    Action,
    Enqueue,
    EnqueueLayer,
    RecordNextStep,
    validate_order,
)
from ragq.orchestration.flow.calls import settle
from ragq.orchestration.flow.events import (
    CheckDue,
    Event,
    JobStarted,
    LayerDone,
    PlanDue,
    PlanLookedUp,
    Probed,
    Refused,
    RetrieveDue,
    RoleAnswered,
    RoleFailed,
    Searched,
    StepFailed,
    SynthesizeDue,
    VerifyDue,
)
from ragq.orchestration.flow.state import JobState

Handler = Callable[[JobState, Any], list[Action]]

HANDLERS: dict[type[Event], Handler] = {
    JobStarted: start.on_job_started,
    PlanDue: start.on_plan_due,
    PlanLookedUp: start.on_plan_looked_up,
    RetrieveDue: retrieve.on_retrieve_due,
    Probed: retrieve.on_probed,
    Searched: retrieve.on_searched,
    CheckDue: check.on_check_due,
    LayerDone: rounds.on_layer_done,
    VerifyDue: rounds.on_verify_due,
    SynthesizeDue: answer.on_synthesize_due,
    StepFailed: answer.on_step_failed,
}

ANSWERS: dict[str, Handler] = {
    "ticket_reader": start.on_reader,
    "router": start.on_router,
    "source_router": retrieve.on_source_router,
    "planner": start.on_planner,
    "sufficiency": check.on_sufficiency,
    "verifier": rounds.on_verifier,
    "reranker": answer.on_reranker,
    "synthesizer": answer.on_synthesizer,
}

# A refusal is handled by the step whose event was being decided when the charge was refused.
REFUSALS: dict[type[Event], Handler] = {
    JobStarted: start.out_of_budget,
    PlanLookedUp: start.out_of_budget,
    RetrieveDue: retrieve.on_refused,
    Probed: retrieve.on_refused,
    CheckDue: check.on_refused,
    VerifyDue: start.out_of_budget,
    SynthesizeDue: answer.on_refused,
}
REFUSED_ANSWERS: dict[str, Handler] = {
    "reranker": answer.on_refused,
    "ticket_reader": start.out_of_budget,
    "router": start.out_of_budget,
    "source_router": retrieve.on_source_router_refused,
}


def decide(state: JobState, event: Event) -> list[Action]:
    """The actions ``event`` calls for, in order (see :mod:`ragq.orchestration.flow.actions`).

    Raises KeyError for an event no handler knows (a programming error, not a job's)."""
    if state.ended:
        actions = _after_the_end(state, event)
    elif isinstance(event, RoleAnswered):
        actions = ANSWERS[event.call.role](state, event)
    elif isinstance(event, Refused):
        during = event.during
        handler = (REFUSED_ANSWERS[during.call.role] if isinstance(during, RoleAnswered)
                   else REFUSALS[type(during)])
        actions = handler(state, event)
    elif isinstance(event, RoleFailed):
        actions = settle(event)
    else:
        actions = HANDLERS[type(event)](state, event)
    actions = with_next_step(actions)
    validate_order(actions)
    return actions


def with_next_step(actions: list[Action]) -> list[Action]:
    """``actions`` with the job-level message they send recorded among their ledger writes,
    last of them, so it commits with the step that sends it (and not when a charge before it
    is refused)."""
    sends = [a for a in actions if isinstance(a, Enqueue | EnqueueLayer)]
    if not sends:
        return actions
    writes = sum(1 for a in actions if isinstance(a, LEDGER_WRITES))
    return [*actions[:writes], RecordNextStep(sends[-1]), *actions[writes:]]


def _after_the_end(state: JobState, event: Event) -> list[Action]:
    """An ended job (cancelled, failed) enqueues nothing; a call that was under way is still
    recorded and settled, and a pipeline still replies, so its layer's chord completes."""
    if isinstance(event, RoleAnswered) and event.call.role == "source_router":
        return [*settle(event), *_after_the_end(state, retrieve.due_of(event))]
    if isinstance(event, RoleAnswered | RoleFailed):
        return settle(event)
    due = event.request if isinstance(event, Probed | Searched) else event
    if isinstance(due, RetrieveDue | CheckDue):
        try:
            sq = state.sub_query(due.round, due.index)
        except KeyError:
            return []
        return [retrieve.summary(sq, None, skipped=True)]
    return []
