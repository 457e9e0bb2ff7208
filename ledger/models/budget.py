"""Per-job budgets and every charge made against them.

``job_budgets`` keeps one ``limit_*``/``used_*`` pair per :class:`BudgetDimension` in a single row,
so a charge is one conditional ``UPDATE … WHERE used + n <= limit``: the database's row lock makes
it atomic across processes, and two tasks can never both take the last unit.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import BigInteger, Integer, Numeric, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ragq.ledger.models.base import MONEY, Base, created_column, id_column, ref_column
from ragq.ledger.models.enums import BudgetDimension, ChargeOutcome, db_enum


class JobBudgetRow(Base):
    """The resolved budget of one job: a ``NULL`` limit means that dimension is unlimited."""

    __tablename__ = "job_budgets"

    job_id: Mapped[str] = ref_column("jobs.id", primary_key=True)
    profile: Mapped[str | None] = mapped_column(String(64))
    limit_steps: Mapped[int | None] = mapped_column(Integer)
    used_steps: Mapped[int] = mapped_column(Integer, default=0)
    limit_retrieval_calls: Mapped[int | None] = mapped_column(Integer)
    used_retrieval_calls: Mapped[int] = mapped_column(Integer, default=0)
    limit_unique_queries: Mapped[int | None] = mapped_column(Integer)
    used_unique_queries: Mapped[int] = mapped_column(Integer, default=0)
    limit_rerank_calls: Mapped[int | None] = mapped_column(Integer)
    used_rerank_calls: Mapped[int] = mapped_column(Integer, default=0)
    limit_context_tokens: Mapped[int | None] = mapped_column(BigInteger)
    used_context_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    limit_llm_tokens: Mapped[int | None] = mapped_column(BigInteger)
    used_llm_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    limit_cost_usd: Mapped[Decimal | None] = mapped_column(MONEY)
    used_cost_usd: Mapped[Decimal] = mapped_column(MONEY, default=Decimal(0))
    limit_latency_ms: Mapped[int | None] = mapped_column(BigInteger)
    used_latency_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    deadline_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = created_column()


class BudgetChargeRow(Base):
    """One attempt to spend budget, granted or refused, keyed so a redelivered task pays once.

    ``idempotency_key`` is chosen by the caller from what identifies the work (e.g.
    ``"retrieve:sq_…:attempt:2"``); ``step`` names the task for replay and reports. The unique
    index on ``(job_id, idempotency_key)`` also serves "all charges of a job".
    """

    __tablename__ = "budget_charges"
    __table_args__ = (UniqueConstraint("job_id", "idempotency_key"),)

    id: Mapped[str] = id_column("chg")
    job_id: Mapped[str] = ref_column("jobs.id")
    dimension: Mapped[BudgetDimension] = mapped_column(db_enum(BudgetDimension, "dimension"))
    amount: Mapped[Decimal] = mapped_column(Numeric(20, 8))
    idempotency_key: Mapped[str] = mapped_column(String(255))
    step: Mapped[str | None] = mapped_column(String(128))
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    outcome: Mapped[ChargeOutcome] = mapped_column(db_enum(ChargeOutcome, "charge_outcome"))
    created_at: Mapped[datetime] = created_column()
