"""Every call to a model provider, with its tokens, cost and latency."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ragq.ledger.models.base import MONEY, Base, created_column, id_column, ref_column
from ragq.ledger.models.enums import ModelCallStatus, db_enum


class ModelCallRow(Base):
    """One provider call for one role (router, planner, checker, rewriter, verifier, synthesizer).

    ``call_key`` identifies the logical call within the job so a redelivered task records it once;
    ``job_id`` is empty for calls made outside a job (e.g. an evaluation's baseline).
    """

    __tablename__ = "model_calls"
    __table_args__ = (UniqueConstraint("job_id", "call_key"),)

    id: Mapped[str] = id_column("mc")
    job_id: Mapped[str | None] = ref_column("jobs.id", nullable=True)
    role: Mapped[str] = mapped_column(String(32))
    provider: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(256))
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    call_key: Mapped[str] = mapped_column(String(255))
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[Decimal] = mapped_column(MONEY, default=Decimal(0))
    latency_ms: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[ModelCallStatus] = mapped_column(
        db_enum(ModelCallStatus, "model_call_status"), default=ModelCallStatus.OK
    )
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_column()
