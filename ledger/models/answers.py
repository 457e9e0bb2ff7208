"""The answer a job gave and the evidence each claim cites."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ragq.ledger.models.base import Base, created_column, id_column, ref_column


class AnswerRow(Base):
    """The one answer of a job, possibly partial; ``extractive`` labels offline answers honestly."""

    __tablename__ = "answers"

    id: Mapped[str] = id_column("ans")
    job_id: Mapped[str] = ref_column("jobs.id")
    text: Mapped[str] = mapped_column(Text)
    extractive: Mapped[bool] = mapped_column(Boolean, default=False)
    contradictions: Mapped[list[Any]] = mapped_column(default=list)
    asks: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = created_column()

    citations: Mapped[list[CitationRow]] = relationship(
        order_by="CitationRow.position",
        lazy="selectin",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )

    __table_args__ = (UniqueConstraint("job_id"),)


class CitationRow(Base):
    """One cited chunk, in the order the answer cites it."""

    __tablename__ = "citations"
    __table_args__ = (UniqueConstraint("answer_id", "position"),)

    id: Mapped[str] = id_column("cit")
    answer_id: Mapped[str] = ref_column("answers.id")
    evidence_item_id: Mapped[str | None] = ref_column(
        "evidence_items.id", nullable=True, ondelete="SET NULL"
    )
    doc_id: Mapped[str] = mapped_column(String(512))
    chunk_id: Mapped[str] = mapped_column(String(600))
    quote: Mapped[str | None] = mapped_column(Text)
    position: Mapped[int] = mapped_column(Integer)
