"""Model-role calls as actions: pay before the call, record and settle after it.

A call reserves its estimated prompt tokens (and a step) under ``{call_key}:pre``; once it
answered, every attempt it made is recorded and what it really spent beyond the reservation,
and its cost, is settled under ``{call_key}:settle``. The settlement is forced: the tokens are
already spent, so the ledger must hold them even past a limit; the next charge is then refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ragq.orchestration.flow.actions import (
    Action,
    CallRole,
    Charge,
    DecideLocally,
    RecordModelCall,
    RoleRequest,
)
from ragq.orchestration.flow.events import RoleAnswered, RoleFailed
from ragq.schemas.flow import Usage
from ragq.schemas.statuses import BudgetDimension


def ask(role: str, call_key: str, reserve: int, request: RoleRequest,
        context: Mapping[str, Any] | None = None, *, local: bool = False) -> list[Action]:
    """Pay a step and ``reserve`` tokens, then call ``role``; ``local``: pay the step only and
    play the role in process (no model, no tokens)."""
    if local:
        call = CallRole(role, call_key, 0, request, dict(context or {}))
        return [Charge(f"{call_key}:pre", {BudgetDimension.STEPS: 1}, step=role),
                DecideLocally(call)]
    pre = Charge(f"{call_key}:pre", {BudgetDimension.STEPS: 1, BudgetDimension.LLM_TOKENS: reserve,
                                     BudgetDimension.COST_USD: 0}, step=role)
    return [pre, CallRole(role, call_key, reserve, request, dict(context or {}))]


def spent_tokens(usage: Usage) -> int:
    """Every token a call spent, over all its attempts."""
    if usage.attempts:
        return sum(a.prompt_tokens + a.completion_tokens for a in usage.attempts)
    return usage.prompt_tokens + usage.completion_tokens


def settle(event: RoleAnswered | RoleFailed, *, roles: str | None = None) -> list[Action]:
    """Record what a call did and settle what it spent beyond its reservation (nothing for an
    answer given in process without a model). ``roles``: the roles one merged call played
    (``sufficiency+finder``), recorded as its role; the call's own role otherwise."""
    usage, call = event.usage, event.call
    if usage is None:
        return []
    actions: list[Action] = [RecordModelCall(roles or call.role, call.call_key, usage,
                                             event.provider)]
    amounts: dict[BudgetDimension, int | Decimal] = {}
    tokens = spent_tokens(usage)
    if tokens > call.reserve:
        amounts[BudgetDimension.LLM_TOKENS] = tokens - call.reserve
    cost = Decimal(str(usage.cost_usd))
    if cost > 0:
        amounts[BudgetDimension.COST_USD] = cost
    if amounts:
        actions.append(Charge(f"{call.call_key}:settle", amounts, step=call.role, force=True))
    return actions
