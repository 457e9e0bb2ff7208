"""Who asked what: API keys, batches of tickets and the jobs they become."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ragq.ledger.models.base import Base, created_column, id_column, ref_column
from ragq.ledger.models.enums import BatchStatus, JobStatus, db_enum


class ApiKeyRow(Base):
    """An API key of a tenant; only its hash is stored, so a leaked ledger leaks no key."""

    __tablename__ = "api_keys"

    id: Mapped[str] = id_column("key")
    tenant: Mapped[str] = mapped_column(String(128), index=True)
    key_hash: Mapped[str] = mapped_column(String(128), unique=True)
    acl: Mapped[list[str]] = mapped_column(default=list)
    created_at: Mapped[datetime] = created_column()
    revoked_at: Mapped[datetime | None]


class TenantRow(Base):
    """A tenant's share of the waiting line (issue 36): its ``weight`` against the other
    tenants' and its ``max_open_jobs`` (None: only the window limits it). A tenant without a
    row has weight 1 and no limit of its own."""

    __tablename__ = "tenants"

    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    weight: Mapped[int] = mapped_column(Integer, default=1)
    max_open_jobs: Mapped[int | None] = mapped_column(Integer)
    updated_at: Mapped[datetime] = created_column()


class BatchRow(Base):
    """A JSONL batch of tickets; its counters are bumped atomically as its jobs finish.

    ``total_count`` counts accepted tickets (jobs); ``invalid_count`` counts input lines that were
    rejected before becoming a job and went straight to the errors file.
    """

    __tablename__ = "batches"
    __table_args__ = (Index(None, "tenant", "created_at"),)

    id: Mapped[str] = id_column("bat")
    tenant: Mapped[str] = mapped_column(String(128))
    status: Mapped[BatchStatus] = mapped_column(
        db_enum(BatchStatus, "batch_status"), default=BatchStatus.VALIDATING, index=True
    )
    collection: Mapped[str] = mapped_column(String(256))
    input_filename: Mapped[str | None] = mapped_column(String(1024))
    total_count: Mapped[int] = mapped_column(Integer, default=0)
    completed_count: Mapped[int] = mapped_column(Integer, default=0)
    insufficient_evidence_count: Mapped[int] = mapped_column(Integer, default=0)
    budget_exhausted_count: Mapped[int] = mapped_column(Integer, default=0)
    needs_review_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    rejected_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    failed_count: Mapped[int] = mapped_column(Integer, default=0)
    cancelled_count: Mapped[int] = mapped_column(Integer, default=0)
    invalid_count: Mapped[int] = mapped_column(Integer, default=0)
    budget: Mapped[dict[str, Any] | None]
    webhook_url: Mapped[str | None] = mapped_column(String(2048))
    webhook_secret: Mapped[str | None] = mapped_column(String(256))
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", default=dict)
    error: Mapped[dict[str, Any] | None]
    created_at: Mapped[datetime] = created_column()
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]


class JobRow(Base):
    """One question being answered; a batch ticket or a single ``ask``.

    ``route`` is the path taken (simple, bounded, full, escalate) and ``question_class`` the
    classifier's label, both with ``route_reason`` so routing can be evaluated (C3).
    ``exhausted_dimension`` is set when ``status`` is ``budget_exhausted``. ``dispatched_at``
    is when its first step was sent: a job of a large backlog waits unsent (``queued``, its
    budget and deadline not yet open) until the window of open jobs has room for it.
    ``priority`` (interactive or bulk) orders it within its tenant's share of that window.
    """

    __tablename__ = "jobs"
    __table_args__ = (
        UniqueConstraint("batch_id", "custom_id"),
        Index(None, "batch_id", "status"),
        Index(None, "tenant", "created_at"),
        # The waiting line's lanes and each lane's oldest jobs, read by every claim.
        Index("ix_jobs_waiting_line", "status", "tenant", "batch_id", "priority", "created_at",
              "position", "id"),
    )

    id: Mapped[str] = id_column("job")
    batch_id: Mapped[str | None] = ref_column("batches.id", nullable=True)
    custom_id: Mapped[str | None] = mapped_column(String(512))
    position: Mapped[int | None] = mapped_column(Integer)
    tenant: Mapped[str] = mapped_column(String(128))
    collection: Mapped[str] = mapped_column(String(256))
    question: Mapped[str] = mapped_column(Text)
    acl: Mapped[list[str]] = mapped_column(default=list)
    question_class: Mapped[str | None] = mapped_column(String(32))
    route: Mapped[str | None] = mapped_column(String(32))
    route_reason: Mapped[str | None] = mapped_column(Text)
    status: Mapped[JobStatus] = mapped_column(
        db_enum(JobStatus, "job_status"), default=JobStatus.QUEUED, index=True
    )
    stop_reason: Mapped[str | None] = mapped_column(String(64))
    exhausted_dimension: Mapped[str | None] = mapped_column(String(32))
    error: Mapped[dict[str, Any] | None]
    result: Mapped[dict[str, Any] | None]
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", default=dict)
    reading: Mapped[dict[str, Any] | None]
    priority: Mapped[str] = mapped_column(String(16), default="bulk", server_default="bulk")
    created_at: Mapped[datetime] = created_column()
    dispatched_at: Mapped[datetime | None]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    # The job-level message its last step sent (see ragq.ledger.stalls), and when the
    # supervisor last sent it again because nothing carried the job on.
    next_step: Mapped[dict[str, Any] | None]
    resumed_at: Mapped[datetime | None]


class BatchInputErrorRow(Base):
    """A batch input line rejected before it became a job: it goes to the batch's errors file
    with its line number and reason, and the rest of the batch runs."""

    __tablename__ = "batch_input_errors"
    __table_args__ = (UniqueConstraint("batch_id", "line"),)

    id: Mapped[str] = id_column("bie")
    batch_id: Mapped[str] = ref_column("batches.id")
    line: Mapped[int] = mapped_column(Integer)
    custom_id: Mapped[str | None] = mapped_column(String(512))
    code: Mapped[str] = mapped_column(String(64))
    message: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = created_column()
