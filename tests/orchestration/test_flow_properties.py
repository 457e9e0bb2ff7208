"""Whole jobs driven through the real decisions and the real step runner, in milliseconds:
hypothesis draws the budgets, the settings and every model answer (valid and broken plans,
verdicts either way, follow-ups, failures), and the promises of the flow must hold for all.

- a job ends exactly once;
- it never spends past its budget: a counted dimension never passes its limit, and no charge
  granted before the work (as opposed to spend settled after it) passes any limit;
- what model calls spent is in the budget's books, past its limit if need be;
- no work is done that a granted charge did not pay for first;
- once the budget refused anything, no new plan, layer or verification round is started;
- every sub-query ends;
- a job over several sources routes every sub-query it searches before searching it, searches
  only sources the job may search, and pays one retrieval call per source searched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragq.ledger.memory import MemoryLedger
from ragq.orchestration.flow import Action, CallRole, JobState, Search
from ragq.orchestration.flow.events import Event
from ragq.schemas.statuses import TERMINAL_JOB_STATUSES, BudgetDimension, SubQueryStatus
from ragq.schemas.tasks import Task
from ragq.schemas.ticket import Priority
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world

QUESTIONS = ["Who founded the company that makes the camera?", "What is the refund plan limit?",
             "Compare the drone and the camera lens", "How do I rotate a key?",
             "Hello,\n\nWe run a shop.\n\nWhat is the refund limit? How do I rotate a key?\n\n"
             "Thanks,\nAl"]
COUNTED = (BudgetDimension.STEPS, BudgetDimension.RETRIEVAL_CALLS,
           BudgetDimension.UNIQUE_QUERIES, BudgetDimension.RERANK_CALLS,
           BudgetDimension.CONTEXT_TOKENS)
STARTS_WORK = {Task.PLAN, Task.VERIFY, Task.AFTER_LAYER}


class Clock:
    """A clock that moves 50 ms each time it is read, so latency deadlines pass in tests."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=50)
        return self.now


@dataclass(frozen=True)
class WatchedRunner(Runner):
    """The real runner, checking as each piece of work is done that a granted charge paid for
    it, and noting when a job's budget first refused something."""

    journal: list[tuple[str, Any]] = field(default_factory=list)

    def perform(self, work: Action, state: JobState) -> Event:
        job = self.ledger.jobs[state.job_id]  # type: ignore[attr-defined]
        if isinstance(work, CallRole):
            paid = job.charges[f"{work.call_key}:pre"]
            assert paid.refused is None, f"{work.call_key} ran on a refused charge"
        if isinstance(work, Search):
            sq = state.sub_query(work.request.round, work.request.index)
            paid = job.charges[f"retrieve:{sq.id}:{work.request.attempt}"]
            assert paid.refused is None
            assert dict(paid.rows).get(BudgetDimension.RETRIEVAL_CALLS) == len(work.collections)
            assert set(work.collections) <= set(state.searchable)
            if state.routes_sources:
                assert work.collections == sq.sources
        self.journal.append(("work", type(work).__name__))
        return super().perform(work, state)

    def apply(self, state: JobState, event: Event, actions: Any) -> list[Action]:
        before = self.ledger.jobs[state.job_id].budget  # type: ignore[attr-defined]
        effects = super().apply(state, event, actions)
        after = self.ledger.jobs[state.job_id].budget  # type: ignore[attr-defined]
        if after and after.first_refused and not (before and before.first_refused):
            self.journal.append(("refused", state.job_id))
        return effects


class WatchedDispatcher(InlineDispatcher):
    def enqueue(self, job_id: str, task: str, args: Any,
                priority: Priority = Priority.BULK) -> None:
        self.runner.journal.append(("sent", (job_id, task)))  # type: ignore[attr-defined]
        super().enqueue(job_id, task, args, priority)

    def enqueue_layer(self, job_id: str, round_: int, layer: int, indexes: Any,
                      priority: Priority = Priority.BULK) -> None:
        self.runner.journal.append(("sent", (job_id, Task.AFTER_LAYER)))  # type: ignore[attr-defined]
        super().enqueue_layer(job_id, round_, layer, indexes, priority)


budgets = st.fixed_dictionaries({}, optional={
    "max_steps": st.integers(1, 40), "max_retrieval_calls": st.integers(1, 12),
    "max_unique_queries": st.integers(1, 12), "max_rerank_calls": st.integers(0, 2),
    "max_context_tokens": st.integers(1, 3000), "max_llm_tokens": st.integers(1, 20_000),
    "max_cost_usd": st.sampled_from([0.0, 0.001, 0.01, 0.05]),
    "max_latency_ms": st.integers(1, 20_000)})


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), budget=budgets,
       route=st.sampled_from([None, None, "simple", "bounded", "full", "escalate"]),
       dedup=st.booleans(), expansion=st.booleans(), budgets_on=st.booleans(),
       failure_rate=st.sampled_from([0.0, 0.0, 0.0, 0.05]),
       acl=st.sampled_from([("public",), ("staff",), ("public", "staff")]),
       questions=st.lists(st.sampled_from(QUESTIONS), min_size=1, max_size=3),
       sources=st.sampled_from([None, None, [COLLECTION], [COLLECTION, "kb2", "kb3"]]))
def test_every_job_keeps_the_flows_promises(seed, budget, route, dedup, expansion, budgets_on,
                                            failure_rate, acl, questions, sources):
    world = seeded_world(seed, failure_rate=failure_rate)
    ledger = MemoryLedger(clock=Clock())
    ledger.documents.update({(COLLECTION, f"doc{i}"): "v1" for i in range(8)})
    runner = WatchedRunner(ledger, world, config(dedup_enabled=dedup,
                                                 adaptive_expansion=expansion,
                                                 budgets_enabled=budgets_on))
    for question in questions:
        meta = {"budget": budget or None, "route": route, "sources": sources}
        job_id = ledger.add_job(question, collection=COLLECTION, acl=acl, meta=meta)
        WatchedDispatcher(runner).run(job_id)
        job = ledger.jobs[job_id]

        assert job.endings == 1 and job.status in TERMINAL_JOB_STATUSES
        assert job.result is not None and job.result["status"] == job.status.value
        assert [a["index"] for a in job.result["asks"]] == sorted(job.asks)
        assert {a["status"] for a in job.result["asks"]} <= {"answered", "incomplete",
                                                             "insufficient_evidence"}
        assert all(sq.status != SubQueryStatus.PENDING for sq in job.sub_queries.values())
        _within_budget(job)
        _spend_is_booked(job)
        _searched_where_routed(job, sources)
        _nothing_started_after_a_refusal(runner.journal, job_id)


def _searched_where_routed(job: Any, sources: list[str] | None) -> None:
    for request in job.requests.values():
        assert set(request.sources) <= set(sources or [COLLECTION])
        if sources and len(sources) > 1:
            sq = next(s for s in job.sub_queries.values() if s.id == request.sub_query_id)
            assert sq.sources and request.sources == sq.sources
            assert job.source_routes[sq.id].choice.sources == list(sq.sources)


def _within_budget(job: Any) -> None:
    assert job.budget is not None
    limits, used = job.budget.limits, job.budget.used
    for dim in COUNTED:
        if limits[dim] is not None:
            assert used[dim] <= limits[dim], dim
    paid_before = {dim: Decimal(0) for dim in BudgetDimension}
    for charge in job.charges.values():
        if charge.refused is None and not charge.forced:
            for dim, amount in charge.rows:
                paid_before[dim] += Decimal(amount)
    for dim, amount in paid_before.items():
        if limits[dim] is not None:
            assert amount <= Decimal(limits[dim]), dim


def _spend_is_booked(job: Any) -> None:
    tokens = sum(call[1] + call[2] for call in job.model_calls.values())
    cost = sum(Decimal(str(call[3])) for call in job.model_calls.values())
    assert job.budget.used[BudgetDimension.LLM_TOKENS] >= tokens
    assert Decimal(job.budget.used[BudgetDimension.COST_USD]) >= cost


def _nothing_started_after_a_refusal(journal: list[tuple[str, Any]], job_id: str) -> None:
    mine = [(kind, what) for kind, what in journal
            if (kind == "refused" and what == job_id)
            or (kind == "sent" and what[0] == job_id)]
    refused_at = next((i for i, (kind, _) in enumerate(mine) if kind == "refused"), None)
    if refused_at is not None:
        later = [what[1] for kind, what in mine[refused_at:] if kind == "sent"]
        assert not STARTS_WORK & set(later), later
