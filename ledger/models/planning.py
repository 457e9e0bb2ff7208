"""How a job was decomposed and judged: plans, sub-queries and verifier verdicts.

``round`` is the verification iteration: round 0 holds the plan's sub-queries, round *n* the
follow-up queries the verifier asked for after round *n - 1*.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ragq.ledger.models.base import Base, created_column, id_column, ref_column
from ragq.ledger.models.enums import SubQueryOrigin, SubQueryStatus, db_enum


class AskRow(Base):
    """One ask of a job (a plain question is its job's only ask): what it asks, how the reader
    found it, its route and its validated plan."""

    __tablename__ = "asks"
    __table_args__ = (UniqueConstraint("job_id", "index"),)

    id: Mapped[str] = id_column("ask")
    job_id: Mapped[str] = ref_column("jobs.id")
    index: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    reason: Mapped[str | None] = mapped_column(Text)
    question_class: Mapped[str | None] = mapped_column(String(32))
    route: Mapped[str | None] = mapped_column(String(32))
    route_reason: Mapped[str | None] = mapped_column(Text)
    plan: Mapped[dict[str, Any] | None]
    repair_reason: Mapped[str | None] = mapped_column(Text)
    cache_hit: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = created_column()


class PlanRow(Base):
    """The plan a job executed in one round, with why it was repaired or replaced, if it was."""

    __tablename__ = "plans"
    __table_args__ = (UniqueConstraint("job_id", "round"),)

    id: Mapped[str] = id_column("pln")
    job_id: Mapped[str] = ref_column("jobs.id")
    round: Mapped[int] = mapped_column(Integer, default=0)
    plan: Mapped[dict[str, Any]]
    strategy: Mapped[str | None] = mapped_column(String(64))
    repair_reason: Mapped[str | None] = mapped_column(Text)
    cache_hit: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = created_column()


class SubQueryRow(Base):
    """One atomic sub-query; ``final_text`` is what was searched after dependency substitution.

    ``depends_on`` lists indexes of sub-queries of the same job and round; ``finding`` is the
    resolved answer that dependent sub-queries get substituted into their text, and
    ``finding_alternatives`` the finder's runners-up, best first, which a dependent that found
    nothing with the finding searches with next.
    """

    __tablename__ = "sub_queries"
    __table_args__ = (UniqueConstraint("job_id", "round", "index"),)

    id: Mapped[str] = id_column("sq")
    job_id: Mapped[str] = ref_column("jobs.id")
    round: Mapped[int] = mapped_column(Integer, default=0)
    index: Mapped[int] = mapped_column(Integer)
    origin: Mapped[SubQueryOrigin] = mapped_column(
        db_enum(SubQueryOrigin, "sub_query_origin"), default=SubQueryOrigin.PLAN
    )
    original_text: Mapped[str] = mapped_column(Text)
    final_text: Mapped[str | None] = mapped_column(Text)
    reason: Mapped[str | None] = mapped_column(Text)
    depends_on: Mapped[list[int]] = mapped_column(default=list)
    status: Mapped[SubQueryStatus] = mapped_column(
        db_enum(SubQueryStatus, "sub_query_status"), default=SubQueryStatus.PENDING
    )
    finding: Mapped[str | None] = mapped_column(Text)
    finding_alternatives: Mapped[list[str] | None]
    ask: Mapped[int | None] = mapped_column(Integer)
    # Where the source router sent it (a job searching several sources): the sources chosen,
    # and the decision ({"scores": {source: score}, "reason": ..., "by": provider}).
    sources: Mapped[list[str] | None]
    source_route: Mapped[dict[str, Any] | None]
    created_at: Mapped[datetime] = created_column()
    finished_at: Mapped[datetime | None]


class VerificationRow(Base):
    """The verifier's verdict on all evidence of a job after one round (C8)."""

    __tablename__ = "verifications"
    __table_args__ = (UniqueConstraint("job_id", "round"),)

    id: Mapped[str] = id_column("ver")
    job_id: Mapped[str] = ref_column("jobs.id")
    round: Mapped[int] = mapped_column(Integer)
    sufficient: Mapped[bool] = mapped_column(Boolean)
    confidence: Mapped[float] = mapped_column(Float)
    missing_info: Mapped[list[str]] = mapped_column(default=list)
    follow_up_queries: Mapped[list[str]] = mapped_column(default=list)
    reason: Mapped[str | None] = mapped_column(Text)
    new_evidence_count: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = created_column()
