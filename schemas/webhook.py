"""Webhook events (SPEC C15): the small JSON body a receiver gets, and how events are named.

The body points to the results instead of carrying them. ``webhook-id`` is derived from the
event type and the entity id, so the same event always gets the same id.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragq.schemas.statuses import BatchStatus, JobStatus

JOB_EVENT = {
    JobStatus.COMPLETED: "job.completed",
    JobStatus.INSUFFICIENT_EVIDENCE: "job.completed",
    JobStatus.BUDGET_EXHAUSTED: "job.completed",
    JobStatus.FAILED: "job.failed",
    JobStatus.CANCELLED: "job.cancelled",
}
BATCH_EVENT = {
    BatchStatus.COMPLETED: "batch.completed",
    BatchStatus.CANCELLED: "batch.cancelled",
    BatchStatus.FAILED: "batch.failed",
}


class WebhookEventData(BaseModel):
    """What happened to which batch or job; ``results_url`` says where to fetch the results."""

    model_config = ConfigDict(extra="allow")

    batch_id: str | None = None
    job_id: str | None = None
    custom_id: str | None = None
    status: str
    counts: dict[str, int] | None = None
    results_url: str


class WebhookEvent(BaseModel):
    """The body of every delivery: ``{"type", "timestamp", "data"}``."""

    type: str = Field(description="e.g. batch.completed, batch.cancelled, job.completed")
    timestamp: datetime
    data: WebhookEventData


def event_id(event_type: str, entity_id: str) -> str:
    """The ``webhook-id`` of an event: stable across retries and redelivered tasks."""
    digest = hashlib.sha256(f"{event_type}:{entity_id}".encode()).hexdigest()[:32]
    return f"msg_{digest}"


def render_body(payload: dict[str, Any], *, base_url: str) -> bytes:
    """The exact bytes sent (and signed): the stored payload with ``results_url`` made absolute.

    Deterministic (sorted keys, compact), so every retry of an event sends the same body.
    """
    data = dict(payload.get("data") or {})
    if str(data.get("results_url", "")).startswith("/"):
        data["results_url"] = base_url.rstrip("/") + data["results_url"]
    body = {**payload, "data": data}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode()
