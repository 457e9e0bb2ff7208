"""The start of a job: read it into asks, route each ask (C3), give the job its budget (C9),
plan each ask (C4), launch round 0.

A job is one or more *asks*: a plain question is its own single ask, a support ticket is read
into the questions and requests it contains (its greeting, logs and signature set aside, its
background kept as context for the planner). Each ask is routed and planned on its own; their
plans run as one DAG, so the asks search in parallel. The job's budget is the sum of its asks'
route profiles (the longest latency among them), then the batch's and the ticket's overrides.
An ask routed ``simple`` gets a one-sub-query plan at once; any other ask is planned by the plan
step: a cached plan for the same text (a step, no model call) or the planner's, which is then
cached. A plan of several parts also searches its ask whole, beside the parts.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragq.orchestration.asks import MAX_ASKS, merge_asks
from ragq.orchestration.budgets import (
    UNLIMITED,
    budget_stop,
    combined_profile,
    profile_for,
    resolve_budget,
    with_searches,
)
from ragq.orchestration.context import estimate_tokens
from ragq.orchestration.flow.actions import (
    WORK,
    Action,
    CachePlan,
    Charge,
    Enqueue,
    EnqueueLayer,
    LookUpPlan,
    NewSubQuery,
    OpenBudget,
    PlanRequest,
    ReadRequest,
    RecordAskPlan,
    RecordAskRoute,
    RecordPlan,
    RecordReading,
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
from ragq.orchestration.flow.state import WHOLE_QUESTION, AskState, JobState
from ragq.orchestration.plan import PLACEHOLDER, ValidatedPlan, layers, validate_plan
from ragq.orchestration.routing import ROUTE_ORDER, RoutePath, budget_for, path_for
from ragq.orchestration.text import CONTEXT_MAX_CHARS, bounded_ask
from ragq.orchestration.windows import TICKET_WINDOW, ticket_windows
from ragq.schemas.flow import (
    Ask,
    Plan,
    PlannedSubQuery,
    QuestionClass,
    RouteDecision,
    Strategy,
    TicketReading,
)
from ragq.schemas.metadata import MetadataField
from ragq.schemas.statuses import BudgetDimension, JobStatus
from ragq.schemas.tasks import Task

# A text of one line, one question and no more than a long sentence is a question, not a ticket.
TICKET_MIN_CHARS = 300


def reads_as_ticket(text: str) -> bool:
    """Whether ``text`` needs reading into asks: several lines, several questions, or longer
    than a question usually is."""
    text = text.strip()
    return "\n" in text or text.count("?") > 1 or len(text) > TICKET_MIN_CHARS


def call_key(base: str, ask_index: int) -> str:
    """The key of a per-ask call: the first ask's keeps the plain name (``route``, ``plan``)."""
    return base if ask_index == 0 else f"{base}.{ask_index}"


# --- reading and routing ------------------------------------------------------------------


def on_job_started(state: JobState, event: JobStarted) -> list[Action]:
    """A question is its own single ask; a ticket is read first. Either way the asks are then
    routed, under a ``simple`` budget until the routes are known."""
    head: list[Action] = [SetStatus(JobStatus.ROUTING)]
    if not reads_as_ticket(state.question):
        reading = TicketReading(asks=[Ask(text=state.question, reason="the question itself")])
        return [*head, RecordReading(reading), *_route_next(state, _asks(reading), {})]
    request = ReadRequest(state.question)
    return [*head, open_budget(state, [RoutePath.SIMPLE.value]),
            *ask("ticket_reader", "read", estimate_tokens(state.question), request)]


def on_reader(state: JobState, event: RoleAnswered) -> list[Action]:
    assert isinstance(event.value, TicketReading)
    reading = bounded_reading(event.value, max_asks=state.config.ticket_max_asks)
    return [*settle(event), RecordReading(reading), *_route_next(state, _asks(reading), {})]


def on_router(state: JobState, event: RoleAnswered) -> list[Action]:
    decision = event.value
    assert isinstance(decision, RouteDecision)
    index = int(event.call.context["ask"])
    path = path_for(decision.question_class)
    routed = {a.index: a for a in state.asks if a.routed}
    routed[index] = AskState(index, state.ask(index).text, path.value, decision.question_class,
                             decision.reason)
    return [*settle(event),
            RecordAskRoute(index, decision.question_class, path.value, decision.reason),
            *_route_next(state, list(state.asks), routed)]


def _asks(reading: TicketReading) -> list[AskState]:
    return [AskState(i, a.text) for i, a in enumerate(reading.asks)]


def bounded_reading(reading: TicketReading, *, max_asks: int = MAX_ASKS) -> TicketReading:
    """The reading the flow keeps: its asks as needs (reworded repeats merged, at most
    ``max_asks``: :func:`merge_asks`), an overlong ask (a whole log read as one ask) and the
    context the planner reads bounded to what routing, planning and search can use
    (:func:`bounded_ask`); what was set aside as noise stays as it is."""
    asks = [a.model_copy(update={"text": bounded_ask(a.text)})
            for a in merge_asks(reading.asks, max_asks=max_asks)]
    return reading.model_copy(update={
        "asks": asks, "context": bounded_ask(reading.context, CONTEXT_MAX_CHARS)})


def _route_next(state: JobState, asks: list[AskState], routed: Mapping[int, AskState]
                ) -> list[Action]:
    """Route the next ask (the ticket's fixed route, else the router), or, all routed, start."""
    override = state.meta.get("route")
    if override:
        reason = f"route {override!r} set by the ticket"
        fixed = {a.index: AskState(a.index, a.text, override, QuestionClass.MULTI_HOP, reason)
                 for a in asks}
        return [*(RecordAskRoute(i, QuestionClass.MULTI_HOP, override, reason) for i in fixed),
                *_start(state, fixed)]
    pending = [a for a in asks if a.index not in routed]
    if not pending:
        return _start(state, routed)
    nxt = pending[0]
    budget = [] if state.budget else [open_budget(state, [RoutePath.SIMPLE.value])]
    return [*budget, *ask("router", call_key("route", nxt.index), estimate_tokens(nxt.text),
                          RouteRequest(nxt.text), {"ask": nxt.index},
                          local="router" in state.config.local_roles)]


def open_budget(state: JobState, routes: list[str]) -> OpenBudget:
    """The job's budget for asks on ``routes``: the sum of their profiles, then the batch's and
    the ticket's overrides key by key (unlimited with budgets off)."""
    config = state.config
    profile = combined_profile([profile_for(r, config.budget_profiles) for r in routes])
    profile = with_searches(profile, len(floor_windows(state)))
    budget = resolve_budget(profile, state.batch_budget, state.meta.get("budget"))
    return OpenBudget(",".join(routes), budget if config.budgets_enabled else UNLIMITED)


def _start(state: JobState, routed: Mapping[int, AskState]) -> list[Action]:
    """Every ask routed: budget the job, record its route, plan its asks (at once when all are
    simple, else in the plan step)."""
    asks = [routed[i] for i in sorted(routed)]
    routes = [a.route or RoutePath.FULL.value for a in asks]
    widest = max(asks, key=lambda a: ROUTE_ORDER.index(RoutePath(a.route or "full")))
    reason = widest.route_reason if len(asks) == 1 else \
        f"{len(asks)} asks, routed {', '.join(routes)}"
    head: list[Action] = [open_budget(state, routes),
                          RecordRoute(widest.question_class or QuestionClass.MULTI_HOP,
                                      widest.route or RoutePath.FULL.value, reason)]
    if any(r != RoutePath.SIMPLE for r in routes):
        return [*head, Enqueue(Task.PLAN)]
    plans = {a.index: _single(a.text) for a in asks}
    recorded = [RecordAskPlan(i, p.as_plan(), None, False) for i, p in plans.items()]
    return [*head, *recorded, *start_plan(state, asks, plans, cache_hit=False)]


def _single(text: str) -> ValidatedPlan:
    single = Plan(sub_queries=[PlannedSubQuery(text=text)], reason="simple route")
    return validate_plan(single, question=text, max_sub_queries=1)


# --- planning ------------------------------------------------------------------------------


def max_sub_queries(route: str | None) -> int:
    """How many sub-queries a route allows an ask."""
    return budget_for(route or RoutePath.FULL).max_sub_queries


def on_plan_due(state: JobState, event: PlanDue) -> list[Action]:
    """Plan the next unplanned ask, looking in the plan cache first."""
    return _plan_next(state, {})


def on_plan_looked_up(state: JobState, event: PlanLookedUp) -> list[Action]:
    """A cached plan costs a step (under the planner call's key: a redelivered step that finds
    the plan its first delivery cached must not pay twice); else ask the planner."""
    head: list[Action] = [SetStatus(JobStatus.PLANNING)]
    target = state.ask(event.ask)
    limit = max_sub_queries(target.route)
    key = call_key("plan", event.ask)
    if event.plan is not None:
        plan = validate_plan(event.plan, question=target.text, max_sub_queries=limit)
        paid = Charge(f"{key}:pre", {BudgetDimension.STEPS: 1}, step="planner")
        recorded = RecordAskPlan(event.ask, plan.as_plan(), _repairs(plan), True)
        return [*head, paid, recorded, *_plan_next(state, {event.ask: (plan, True)})]
    request = PlanRequest(target.text, limit, state.ticket_context, filterable_fields(state))
    return [*head, *ask("planner", key, estimate_tokens(target.text), request,
                        {"ask": event.ask})]


def filterable_fields(state: JobState) -> tuple[MetadataField, ...]:
    """The fields a planner may attach filters on: the declared (not inferred) metadata
    fields of the one source the job searches; none over several sources, where a filter
    would mean something in one schema only."""
    sources = state.searchable
    schema = state.schemas.get(sources[0]) if len(sources) == 1 else None
    return tuple(f for f in schema.fields if not f.inferred) if schema else ()


def on_planner(state: JobState, event: RoleAnswered) -> list[Action]:
    proposed = event.value
    assert isinstance(proposed, Plan)
    index = int(event.call.context["ask"])
    target = state.ask(index)
    limit = max_sub_queries(target.route)
    plan = validate_plan(proposed, question=target.text, max_sub_queries=limit)
    actions = [*settle(event), RecordAskPlan(index, plan.as_plan(), _repairs(plan), False),
               *_plan_next(state, {index: (plan, False)})]
    return _before_work(actions, CachePlan(target.text, proposed, limit))


def _plan_next(state: JobState, planned_now: Mapping[int, tuple[ValidatedPlan, bool]]
               ) -> list[Action]:
    """Look up the next ask still without a plan, or, all planned, launch the job's plan."""
    plans: dict[int, tuple[ValidatedPlan, bool]] = {}
    for a in state.asks:
        if a.index in planned_now:
            plans[a.index] = planned_now[a.index]
        elif a.plan is not None:
            plans[a.index] = (ValidatedPlan(tuple(a.plan.sub_queries), a.plan.strategy),
                              a.plan_cache_hit)
        elif a.route == RoutePath.SIMPLE:
            plans[a.index] = (_single(a.text), False)
    pending = [a for a in state.asks if a.index not in plans]
    if pending:
        nxt = pending[0]
        return [LookUpPlan(nxt.text, max_sub_queries(nxt.route), ask=nxt.index)]
    return start_plan(state, list(state.asks), {i: p for i, (p, _) in plans.items()},
                      cache_hit=all(hit for _, hit in plans.values()))


def start_plan(state: JobState, asks: list[AskState], plans: Mapping[int, ValidatedPlan], *,
               cache_hit: bool) -> list[Action]:
    """The asks' plans as one DAG (indexes and placeholders shifted), recorded with their
    sub-queries, and its first layer launched: every ask searches at once. An ask planned in
    several parts also searches its own text, whole: a decomposition can lose what the ask says
    as a whole, and one more search is cheap insurance."""
    parts: list[PlannedSubQuery] = []
    owners: list[int] = []
    first: list[int] = []
    whole: list[AskState] = []
    repairs: list[str] = []
    for a in asks:
        plan, offset = plans[a.index], len(parts)
        first += [offset + i for i in layers(plan)[0]]
        parts += [_shifted(sq, offset) for sq in plan.sub_queries]
        owners += [a.index] * len(plan.sub_queries)
        repairs += [f"ask {a.index}: {r}" if len(asks) > 1 else r for r in plan.repairs]
        if len(plan.sub_queries) > 1:
            whole.append(a)
    strategy = plans[asks[0].index].strategy if len(asks) == 1 else Strategy.AGGREGATE
    combined = ValidatedPlan(tuple(parts), strategy, tuple(repairs))
    items = [NewSubQuery(i, sq.text, tuple(sq.depends_on), reason=sq.reason, ask=owners[i])
             for i, sq in enumerate(parts)]
    for a in whole:
        first.append(len(items))
        items.append(NewSubQuery(len(items), a.text, reason=WHOLE_QUESTION, ask=a.index))
    for window in floor_windows(state):
        first.append(len(items))
        items.append(NewSubQuery(len(items), window, reason=TICKET_WINDOW))
    return [RecordPlan(combined.as_plan(), combined.strategy, "; ".join(repairs) or None,
                       cache_hit),
            RecordSubQueries(0, tuple(items)), EnqueueLayer(0, 0, tuple(first))]


def floor_windows(state: JobState) -> list[str]:
    """The windows a ticket's floor searches: all of its text, noise included (a pasted error
    code or log line names what the customer is stuck on); none for a question, whose own
    search is its floor already."""
    return ticket_windows(state.question) if reads_as_ticket(state.question) else []


def _shifted(sq: PlannedSubQuery, offset: int) -> PlannedSubQuery:
    """A sub-query of one ask's plan, numbered within the job's plan."""
    if not offset:
        return sq
    text = PLACEHOLDER.sub(lambda m: f"{{{int(m.group(1)) + offset}}}", sq.text)
    return sq.model_copy(update={"text": text,
                                 "depends_on": [d + offset for d in sq.depends_on]})


def _repairs(plan: ValidatedPlan) -> str | None:
    return "; ".join(plan.repairs) or None


def _before_work(actions: list[Action], effect: Action) -> list[Action]:
    """``actions`` with ``effect`` placed after their ledger writes and before any work."""
    at = next((i for i, a in enumerate(actions) if isinstance(a, WORK)), len(actions))
    return [*actions[:at], effect, *actions[at:]]


def out_of_budget(state: JobState, event: Refused) -> list[Action]:
    """Stop enqueueing work: answer from what the job has, naming what ran out (C9)."""
    return [Enqueue(Task.SYNTHESIZE, (budget_stop(event.dimension),))]

