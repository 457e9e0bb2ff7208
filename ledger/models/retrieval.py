"""What each search asked, what it found and whether it was enough.

Together these rows answer "which sub-query found this chunk, at which attempt, from which source
version" for any piece of evidence, which is what replaying a job needs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ragq.ledger.models.base import Base, created_column, id_column, ref_column


class RetrievalRequestRow(Base):
    """One search of one sub-query attempt.

    ``normalized_key`` is the dedup/cache key (query, filters, top_k, source version); a request
    answered by an earlier identical one points at it with ``dedup_of`` and is not paid again.
    ``sub_query_id`` is empty for the single-shot path that retrieves for the whole question.
    """

    __tablename__ = "retrieval_requests"
    __table_args__ = (
        UniqueConstraint("job_id", "sub_query_id", "attempt"),
        Index(None, "job_id", "normalized_key"),
    )

    id: Mapped[str] = id_column("rr")
    job_id: Mapped[str] = ref_column("jobs.id")
    sub_query_id: Mapped[str | None] = ref_column("sub_queries.id", nullable=True, index=True)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    query_text: Mapped[str] = mapped_column(Text)
    normalized_key: Mapped[str] = mapped_column(String(128))
    top_k: Mapped[int] = mapped_column(Integer)
    filters: Mapped[dict[str, Any]] = mapped_column(default=dict)
    cache_hit: Mapped[bool] = mapped_column(Boolean, default=False)
    dedup_of: Mapped[str | None] = ref_column(
        "retrieval_requests.id", nullable=True, ondelete="SET NULL"
    )
    hit_count: Mapped[int] = mapped_column(Integer, default=0)
    top_score: Mapped[float | None] = mapped_column(Float)
    latency_ms: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = created_column()


class EvidenceItemRow(Base):
    """One retrieved chunk; ``in_context`` marks the ones that reached the answer model (C11)."""

    __tablename__ = "evidence_items"
    __table_args__ = (
        UniqueConstraint("retrieval_request_id", "chunk_id"),
        Index(None, "job_id", "doc_id"),
    )

    id: Mapped[str] = id_column("ev")
    job_id: Mapped[str] = ref_column("jobs.id")
    retrieval_request_id: Mapped[str] = ref_column("retrieval_requests.id")
    sub_query_id: Mapped[str | None] = ref_column("sub_queries.id", nullable=True, index=True)
    doc_id: Mapped[str] = mapped_column(String(512))
    chunk_id: Mapped[str] = mapped_column(String(600))
    score: Mapped[float] = mapped_column(Float)
    text_score: Mapped[float | None] = mapped_column(Float)  # see Evidence.text_score
    question_score: Mapped[float | None] = mapped_column(Float)  # see Evidence.question_score
    rank: Mapped[int] = mapped_column(Integer)
    source_version: Mapped[str] = mapped_column(String(256))
    authority_tier: Mapped[int] = mapped_column(Integer, default=2)
    title: Mapped[str | None] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    source: Mapped[str | None] = mapped_column(String(256))  # the collection it came from
    in_context: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = created_column()


class SufficiencyCheckRow(Base):
    """The binary "does this context answer the sub-query?" check after one attempt (C7).

    ``rewrite`` is the query text chosen for the next attempt when the check failed.
    """

    __tablename__ = "sufficiency_checks"
    __table_args__ = (UniqueConstraint("sub_query_id", "attempt"),)

    id: Mapped[str] = id_column("chk")
    job_id: Mapped[str] = ref_column("jobs.id", index=True)
    sub_query_id: Mapped[str] = ref_column("sub_queries.id")
    retrieval_request_id: Mapped[str | None] = ref_column("retrieval_requests.id", nullable=True)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    sufficient: Mapped[bool] = mapped_column(Boolean)
    score: Mapped[float | None] = mapped_column(Float)
    reason: Mapped[str | None] = mapped_column(Text)
    rewrite: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_column()
