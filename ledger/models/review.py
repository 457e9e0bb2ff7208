"""The review queue: a job escalated to a human, and how the human resolved it."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ragq.ledger.models.base import Base, created_column, ref_column
from ragq.ledger.models.enums import JobStatus, ReviewDecision, db_enum


class ReviewRow(Base):
    """One escalated job: why it was escalated and the status it would have ended with
    (``outcome``); once resolved, the decision, the reviewer's answer or note, who and when.
    The job waits in the queue while ``resolved_at`` is empty."""

    __tablename__ = "reviews"
    __table_args__ = (Index(None, "tenant", "resolved_at", "created_at"),)

    job_id: Mapped[str] = ref_column("jobs.id", primary_key=True)
    tenant: Mapped[str] = mapped_column(String(128))
    reasons: Mapped[list[str]] = mapped_column(default=list)
    outcome: Mapped[JobStatus] = mapped_column(db_enum(JobStatus, "review_outcome"))
    decision: Mapped[ReviewDecision | None] = mapped_column(
        db_enum(ReviewDecision, "review_decision"))
    answer: Mapped[str | None] = mapped_column(Text)
    note: Mapped[str | None] = mapped_column(Text)
    reviewer: Mapped[str | None] = mapped_column(String(256))
    created_at: Mapped[datetime] = created_column()
    resolved_at: Mapped[datetime | None]
