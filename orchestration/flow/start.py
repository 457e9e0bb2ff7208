"""The start of a job: route it (C3), give it its budget (C9), plan it (C4), launch round 0.

A question routed ``simple`` gets a one-sub-query plan at once; any other route is planned by the
plan step: a cached plan for the same question (a step, no model call) or the planner's, which is
then cached. A plan of several parts also searches the whole question beside them.
"""

from __future__ import annotations

from ragq.orchestration.budgets import UNLIMITED, budget_stop, profile_for, resolve_budget
from ragq.orchestration.context import estimate_tokens
from ragq.orchestration.flow.actions import (
    Action,
    CachePlan,
    Charge,
    Enqueue,
    EnqueueLayer,
    LookUpPlan,
    NewSubQuery,
    OpenBudget,
    PlanRequest,
    RecordPlan,
    RecordRoute,
    RecordSubQueries,
    RouteRequest,
    SetStatus,
)
from ragq.orchestration.flow.calls import ask, settle
from ragq.orchestration.flow.events import (
    JobStarted,
    PlanDue,
    PlanLookedUp,
    Refused,
    RoleAnswered,
)
from ragq.orchestration.flow.state import JobState
from ragq.orchestration.plan import ValidatedPlan, layers, validate_plan
from ragq.orchestration.routing import RoutePath, budget_for, path_for
from ragq.schemas.flow import Plan, PlannedSubQuery, QuestionClass, RouteDecision
from ragq.schemas.statuses import BudgetDimension, JobStatus
from ragq.schemas.tasks import Task

WHOLE_QUESTION = "the whole question, searched beside its parts"


def open_budget(state: JobState, route: str) -> OpenBudget:
    """The job's budget on ``route``: its profile, then the batch's and the ticket's overrides,
    key by key (unlimited with budgets off)."""
    config = state.config
    budget = resolve_budget(profile_for(route, config.budget_profiles), state.batch_budget,
                            state.meta.get("budget"))
    return OpenBudget(route, budget if config.budgets_enabled else UNLIMITED)


def on_job_started(state: JobState, event: JobStarted) -> list[Action]:
    """Route by the ticket's fixed route, else ask the router, under a ``simple`` budget until
    the route is known."""
    override = state.meta.get("route")
    if override:
        decision = RouteDecision(question_class=QuestionClass.MULTI_HOP,
                                 reason=f"route {override!r} set by the ticket")
        return [SetStatus(JobStatus.ROUTING), *start_path(state, decision, RoutePath(override))]
    return [SetStatus(JobStatus.ROUTING), open_budget(state, RoutePath.SIMPLE.value),
            *ask("router", "route", estimate_tokens(state.question), RouteRequest(state.question))]


def on_router(state: JobState, event: RoleAnswered) -> list[Action]:
    decision = event.value
    assert isinstance(decision, RouteDecision)
    return settle(event) + start_path(state, decision, path_for(decision.question_class))


def start_path(state: JobState, decision: RouteDecision, path: RoutePath) -> list[Action]:
    """Put the budget on the path's profile, record the route, and start the path."""
    actions: list[Action] = [open_budget(state, path.value),
                             RecordRoute(decision.question_class, path.value, decision.reason)]
    if path is RoutePath.SIMPLE:
        single = Plan(sub_queries=[PlannedSubQuery(text=state.question)], reason="simple route")
        plan = validate_plan(single, question=state.question, max_sub_queries=1)
        return actions + start_plan(state, plan, cache_hit=False)
    return [*actions, Enqueue(Task.PLAN)]


def max_sub_queries(state: JobState) -> int:
    """How many sub-queries the job's route allows."""
    return budget_for(state.route or RoutePath.FULL).max_sub_queries


def on_plan_due(state: JobState, event: PlanDue) -> list[Action]:
    """Look for this question's plan in the plan cache first."""
    return [LookUpPlan(state.question, max_sub_queries(state))]


def on_plan_looked_up(state: JobState, event: PlanLookedUp) -> list[Action]:
    """A cached plan costs a step (under the planner call's key: a redelivered step that finds
    the plan its first delivery cached must not pay twice); else ask the planner."""
    head: list[Action] = [SetStatus(JobStatus.PLANNING)]
    limit = max_sub_queries(state)
    if event.plan is not None:
        plan = validate_plan(event.plan, question=state.question, max_sub_queries=limit)
        paid = Charge("plan:pre", {BudgetDimension.STEPS: 1}, step="planner")
        return [*head, paid, *start_plan(state, plan, cache_hit=True)]
    request = PlanRequest(state.question, limit)
    return head + ask("planner", "plan", estimate_tokens(state.question), request)


def on_planner(state: JobState, event: RoleAnswered) -> list[Action]:
    proposed = event.value
    assert isinstance(proposed, Plan)
    limit = max_sub_queries(state)
    plan = validate_plan(proposed, question=state.question, max_sub_queries=limit)
    return [*settle(event), *start_plan(state, plan, cache_hit=False),
            CachePlan(state.question, proposed, limit)]


def start_plan(state: JobState, plan: ValidatedPlan, *, cache_hit: bool) -> list[Action]:
    """Record the plan and its sub-queries, and launch its first layer. A plan of several parts
    also searches the whole question: a decomposition can lose what the question says as a
    whole, and one more search is cheap insurance."""
    items = [NewSubQuery(i, sq.text, tuple(sq.depends_on), reason=sq.reason)
             for i, sq in enumerate(plan.sub_queries)]
    first = list(layers(plan)[0])
    if len(items) > 1:
        first.append(len(items))
        items.append(NewSubQuery(len(items), state.question, reason=WHOLE_QUESTION))
    return [RecordPlan(plan.as_plan(), plan.strategy, "; ".join(plan.repairs) or None, cache_hit),
            RecordSubQueries(0, tuple(items)), EnqueueLayer(0, 0, tuple(first))]


def out_of_budget(state: JobState, event: Refused) -> list[Action]:
    """Stop enqueueing work: answer from what the job has, naming what ran out (C9)."""
    return [Enqueue(Task.SYNTHESIZE, (budget_stop(event.dimension),))]
