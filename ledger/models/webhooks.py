"""Webhook targets and every delivery attempt to them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ragq.ledger.models.base import Base, created_column, id_column, ref_column


class WebhookEndpointRow(Base):
    """A tenant's webhook URL and signing secret; a 410 answer sets ``disabled_at`` for good."""

    __tablename__ = "webhook_endpoints"
    __table_args__ = (UniqueConstraint("tenant", "url"),)

    id: Mapped[str] = id_column("whe")
    tenant: Mapped[str] = mapped_column(String(128))
    url: Mapped[str] = mapped_column(String(2048))
    secret: Mapped[str] = mapped_column(String(256))
    disabled_at: Mapped[datetime | None]
    disabled_reason: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_column()


class WebhookDeliveryRow(Base):
    """One attempt to deliver one event.

    ``webhook_id`` is the Standard Webhooks ``webhook-id``: the same for every retry of an event,
    so receivers can deduplicate; ``payload`` is kept so every retry sends the same body.
    """

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("webhook_id", "attempt"),
        Index(None, "next_attempt_at"),
    )

    id: Mapped[str] = id_column("whd")
    webhook_id: Mapped[str] = mapped_column(String(64))
    endpoint_id: Mapped[str | None] = ref_column(
        "webhook_endpoints.id", nullable=True, ondelete="SET NULL", index=True
    )
    batch_id: Mapped[str | None] = ref_column("batches.id", nullable=True, index=True)
    job_id: Mapped[str | None] = ref_column("jobs.id", nullable=True, index=True)
    event_type: Mapped[str] = mapped_column(String(64))
    url: Mapped[str] = mapped_column(String(2048))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    status_code: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    next_attempt_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = created_column()
