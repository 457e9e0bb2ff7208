"""Charging a job's budget from inside a step (SPEC C9): create it once, pay before work,
settle what a model call really spent, and tell whether the job has run out.

Every charge carries an idempotency key built from the job, the step and the attempt, so a
redelivered task gets its first answer back instead of paying twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ragq.ledger import BudgetChargeRow, ChargeOutcome, charge_many, session_scope
from ragq.ledger.budgets import ensure_job_budget, get_job_budget
from ragq.ledger.models import BatchRow, JobRow
from ragq.ledger.models.base import utcnow
from ragq.orchestration.budgets import (
    UNLIMITED,
    deadline_of,
    limits_of,
    profile_for,
    resolve_budget,
)
from ragq.schemas.flow import Usage
from ragq.schemas.statuses import BudgetDimension

if TYPE_CHECKING:
    from ragq.tasks.flow_base import FlowTask

Amounts = Mapping[BudgetDimension, int | Decimal]


def open_budget(task: FlowTask, job_id: str, route: str) -> None:
    """Create the job's budget for ``route`` (its profile, the batch's and the ticket's
    overrides), or move an existing one to the route's profile; the deadline starts now."""
    settings = task.settings
    with session_scope(task.res.engine) as session:
        job = session.get(JobRow, job_id)
        assert job is not None, job_id
        batch = session.get(BatchRow, job.batch_id) if job.batch_id else None
        budget = resolve_budget(profile_for(route, settings.budget_profiles),
                                batch.budget if batch else None, (job.meta or {}).get("budget"))
        if not settings.budgets_enabled:
            budget = UNLIMITED
        row, created = ensure_job_budget(session, job_id=job_id, limits=limits_of(budget),
                                         profile=route, deadline_at=deadline_of(budget, utcnow()))
        if not created and row.profile != route:
            for dim, limit in limits_of(budget).items():
                setattr(row, f"limit_{dim.value}", limit)
            row.profile = route
            row.deadline_at = deadline_of(budget, row.created_at)


def charge(task: FlowTask, job_id: str, key: str, amounts: Amounts, *, step: str,
           attempt: int = 0, force: bool = False) -> BudgetDimension | None:
    """Pay ``amounts`` before the work; the dimension that ran out, or None when paid."""
    with session_scope(task.res.engine) as session:
        outcome = charge_many(session, job_id=job_id, amounts=amounts, idempotency_key=key,
                              step=step, attempt=attempt, force=force)
    return outcome.refused


def settle_model_call(task: FlowTask, job_id: str, key: str, usage: Usage, *, step: str,
                      reserved: int) -> None:
    """Record what a model call spent beyond the tokens reserved before it (and its cost).
    Forced: the tokens are already spent, so the ledger must hold them even past the limit;
    the next charge is then refused."""
    tokens = sum(a.prompt_tokens + a.completion_tokens for a in usage.attempts) \
        if usage.attempts else usage.prompt_tokens + usage.completion_tokens
    cost = Decimal(str(usage.cost_usd))
    amounts: dict[BudgetDimension, int | Decimal] = {}
    if tokens > reserved:
        amounts[BudgetDimension.LLM_TOKENS] = tokens - reserved
    if cost > 0:
        amounts[BudgetDimension.COST_USD] = cost
    if amounts:
        charge(task, job_id, f"{key}:settle", amounts, step=step, force=True)


def exhausted(task: FlowTask, job_id: str) -> BudgetDimension | None:
    """The first dimension the job's budget refused, or None while it has budget left."""
    with session_scope(task.res.engine, readonly=True) as session:
        return _first_refused(session, job_id)


def _first_refused(session: Any, job_id: str) -> BudgetDimension | None:
    dim = session.scalars(
        select(BudgetChargeRow.dimension)
        .where(BudgetChargeRow.job_id == job_id,
               BudgetChargeRow.outcome == ChargeOutcome.REFUSED)
        .order_by(BudgetChargeRow.created_at).limit(1)).first()
    return BudgetDimension(dim) if dim is not None else None


def remaining(task: FlowTask, job_id: str, dimension: BudgetDimension) -> int | None:
    """What is left of ``dimension`` (None: unlimited)."""
    with session_scope(task.res.engine, readonly=True) as session:
        row = get_job_budget(session, job_id=job_id)
        if row is None:
            return None
        limit = getattr(row, f"limit_{dimension.value}")
        used = getattr(row, f"used_{dimension.value}")
        return None if limit is None else max(0, int(limit - used))
