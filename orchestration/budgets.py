"""Budget arithmetic: which limits a job gets, and how a budget stop is named.

A job's budget is its route's profile, overridden key by key by the batch's budget and then by
the ticket's own: a ticket that only says ``max_cost_usd`` keeps every other limit of its route.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from ragq.orchestration.routing import RoutePath
from ragq.schemas.statuses import BUDGET_STOP, BudgetDimension
from ragq.schemas.ticket import Budget, BudgetProfiles

LIMIT_FIELDS: dict[BudgetDimension, str] = {dim: f"max_{dim.value}" for dim in BudgetDimension}

DEFAULT_PROFILES: dict[RoutePath, Budget] = {
    # Measured on the evaluation sets with the offline provider: p95 use sits well inside these,
    # so a budget stops runaway loops without cutting ordinary jobs short.
    RoutePath.SIMPLE: Budget(max_steps=10, max_retrieval_calls=2, max_unique_queries=2,
                             max_rerank_calls=2, max_context_tokens=8_000,
                             max_llm_tokens=40_000, max_cost_usd=0.05, max_latency_ms=120_000),
    RoutePath.BOUNDED: Budget(max_steps=60, max_retrieval_calls=15, max_unique_queries=15,
                              max_rerank_calls=2, max_context_tokens=8_000,
                              max_llm_tokens=200_000, max_cost_usd=0.25,
                              max_latency_ms=300_000),
    RoutePath.FULL: Budget(max_steps=120, max_retrieval_calls=30, max_unique_queries=30,
                           max_rerank_calls=3, max_context_tokens=12_000,
                           max_llm_tokens=500_000, max_cost_usd=1.00, max_latency_ms=600_000),
    RoutePath.ESCALATE: Budget(max_steps=160, max_retrieval_calls=40, max_unique_queries=40,
                               max_rerank_calls=4, max_context_tokens=16_000,
                               max_llm_tokens=800_000, max_cost_usd=2.00,
                               max_latency_ms=900_000),
}
UNLIMITED = Budget()


def profile_for(route: RoutePath | str, overrides: BudgetProfiles | None = None) -> Budget:
    """The budget profile of a route: the settings' override when there is one."""
    path = RoutePath(route)
    mine = getattr(overrides, path.value, None) if overrides is not None else None
    return mine if mine is not None else DEFAULT_PROFILES[path]


def combined_profile(profiles: Sequence[Budget]) -> Budget:
    """The budget of work made of several parts (a ticket's asks): each limit the sum of the
    parts' (unlimited when one part's is), the latency the longest part's, since the parts run
    side by side."""
    if len(profiles) == 1:
        return profiles[0]
    merged: dict[str, object] = {}
    for dim, name in LIMIT_FIELDS.items():
        values = [getattr(p, name) for p in profiles]
        if any(v is None for v in values):
            merged[name] = None
        elif dim is BudgetDimension.LATENCY_MS:
            merged[name] = max(values)
        else:
            merged[name] = sum(values)
    return Budget.model_validate(merged)


def with_searches(profile: Budget, searches: int) -> Budget:
    """``profile`` with room for ``searches`` more plain searches (a step, a retrieval call and
    a unique query each; unlimited stays unlimited): a ticket's floor searches its whole text
    beside what its asks' profiles pay for, and must not eat their share."""
    if searches <= 0:
        return profile
    grown = {name: value + searches for name in ("max_steps", "max_retrieval_calls",
                                                 "max_unique_queries")
             if (value := getattr(profile, name)) is not None}
    return profile.model_copy(update=grown)


def resolve_budget(profile: Budget, *overrides: Budget | Mapping[str, object] | None) -> Budget:
    """``profile`` with each override's set keys on top, later overrides winning."""
    merged = profile.model_dump()
    for override in overrides:
        if override is None:
            continue
        layer = override if isinstance(override, Budget) else Budget.model_validate(override)
        merged.update(layer.model_dump(exclude_none=True))
    return Budget.model_validate(merged)


def limits_of(budget: Budget) -> dict[BudgetDimension, int | Decimal | None]:
    """The ledger's limit per dimension (None: unlimited). Latency is also a deadline."""
    out: dict[BudgetDimension, int | Decimal | None] = {}
    for dim, field in LIMIT_FIELDS.items():
        value = getattr(budget, field)
        out[dim] = Decimal(str(value)) if isinstance(value, float) else value
    return out


def deadline_of(budget: Budget, started_at: datetime) -> datetime | None:
    """When the job must stop starting new work: its latency limit after it started."""
    if budget.max_latency_ms is None:
        return None
    return started_at + timedelta(milliseconds=budget.max_latency_ms)


def budget_stop(dimension: BudgetDimension | str) -> str:
    """The stop reason of a job whose ``dimension`` ran out."""
    return f"{BUDGET_STOP}{BudgetDimension(dimension).value}"


def exhausted_dimension(stop_reason: str | None) -> BudgetDimension | None:
    """The dimension named by a budget stop reason, else None."""
    if not stop_reason or not stop_reason.startswith(BUDGET_STOP):
        return None
    return BudgetDimension(stop_reason.removeprefix(BUDGET_STOP))


def blocking_dimension(limits: Mapping[BudgetDimension, int | Decimal | None],
                       used: Mapping[BudgetDimension, int | Decimal],
                       amounts: Mapping[BudgetDimension, int | Decimal]
                       ) -> BudgetDimension | None:
    """The first dimension of ``amounts`` that would pass its limit, in ``amounts``' order;
    None when the charge fits. A zero amount asks whether the dimension is still open (it is
    not once spend was settled past its limit)."""
    for dimension, amount in amounts.items():
        limit = limits.get(dimension)
        if limit is not None and Decimal(used.get(dimension, 0)) + Decimal(amount) > Decimal(limit):
            return dimension
    return None
