"""The flow's ledger writes applied in one transaction, as the step runner applies them: each
sees what the ones before it wrote, whether the ORM or a prebuilt statement does the writing.
Every test runs on SQLite and, with ``RAGQ_TEST_POSTGRES_URL`` set, on PostgreSQL."""

from __future__ import annotations

from sqlalchemy import Engine

from ragq.ledger import session_scope
from ragq.ledger.budgets import get_job_budget
from ragq.ledger.flow_writes import write
from ragq.orchestration.flow.actions import Charge, OpenBudget
from ragq.schemas.statuses import BudgetDimension
from ragq.schemas.ticket import Budget
from tests.ledger.conftest import new_job

STEPS = BudgetDimension.STEPS


def test_a_charge_after_a_move_to_another_profile_in_one_transaction_pays_by_the_new_limits(
        engine: Engine):
    job_id = new_job(engine)
    with session_scope(engine) as session:
        write(session, job_id, OpenBudget("simple", Budget(max_steps=1)))
    with session_scope(engine) as session:  # escalated: a wider profile, then its first charge
        write(session, job_id, OpenBudget("full", Budget(max_steps=5)))
        refused = write(session, job_id, Charge("plan", {STEPS: 3}, step="plan"))
    assert refused is None
    with session_scope(engine, readonly=True) as session:
        budget = get_job_budget(session, job_id=job_id)
        assert budget is not None
        assert (budget.profile, budget.limit_steps, budget.used_steps) == ("full", 5, 3)
