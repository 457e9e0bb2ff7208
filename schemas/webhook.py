"""Webhook events: the small JSON body a receiver gets, and how events are named.

The body points to the results instead of carrying them. ``webhook-id`` is derived from the
event type and the entity id, so the same event always gets the same id. Events are built here,
validated, by :func:`job_event` and :func:`batch_event`; the ledger stores their JSON form and
:func:`render_body` turns that into the bytes sent.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Final, Literal, Self

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    model_validator,
)

from ragq.schemas.api import BATCH_ERRORS_PATH, BATCH_RESULTS_PATH, JOB_PATH
from ragq.schemas.statuses import BatchStatus, JobStatus

EventType = Literal["job.completed", "job.needs_review", "job.reviewed", "job.failed",
                    "job.cancelled", "batch.completed", "batch.cancelled", "batch.failed"]
JOB_EVENT: dict[JobStatus, EventType] = {
    JobStatus.COMPLETED: "job.completed",
    JobStatus.INSUFFICIENT_EVIDENCE: "job.completed",
    JobStatus.BUDGET_EXHAUSTED: "job.completed",
    JobStatus.NEEDS_REVIEW: "job.needs_review",
    JobStatus.FAILED: "job.failed",
    JobStatus.CANCELLED: "job.cancelled",
}
REVIEWED_EVENT: Final = "job.reviewed"
"""A reviewer resolved a job of the review queue; its ``data.status`` is the job's new status."""
REVIEWED_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.REJECTED})
BATCH_EVENT: dict[BatchStatus, EventType] = {
    BatchStatus.COMPLETED: "batch.completed",
    BatchStatus.CANCELLED: "batch.cancelled",
    BatchStatus.FAILED: "batch.failed",
}


class WebhookEventData(BaseModel):
    """What every event's data says: the entity's new status and where its results are
    (``results_url``, a path under the API; :func:`render_body` makes it absolute)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: str
    results_url: str = Field(pattern=r"^/")


class JobEventData(WebhookEventData):
    """A job ended: which one (and its batch and ``custom_id``, when it has them), and why it
    stopped when it stopped early."""

    job_id: str = Field(min_length=1)
    batch_id: str | None
    custom_id: str | None
    status: JobStatus
    stop_reason: str | None


class BatchEventCounts(BaseModel):
    """A finished batch's jobs by how they ended, and its rejected input lines."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    total: int = Field(ge=0)
    completed: int = Field(ge=0)
    insufficient_evidence: int = Field(ge=0)
    budget_exhausted: int = Field(ge=0)
    needs_review: int = Field(0, ge=0)
    rejected: int = Field(0, ge=0)
    failed: int = Field(ge=0)
    cancelled: int = Field(ge=0)
    invalid: int = Field(ge=0)


class BatchEventData(WebhookEventData):
    """A batch ended: its counts, and where its results and errors files are."""

    batch_id: str = Field(min_length=1)
    status: BatchStatus
    counts: BatchEventCounts
    errors_url: str = Field(pattern=r"^/")


class WebhookEvent(BaseModel):
    """The body of every delivery: ``{"type", "timestamp", "data"}``; ``type`` agrees with the
    status in ``data``. Build one with :func:`job_event` or :func:`batch_event`; store it as
    ``model_dump(mode="json")``."""

    model_config = ConfigDict(frozen=True)

    type: EventType = Field(description="e.g. batch.completed, batch.cancelled, job.completed")
    timestamp: AwareDatetime
    data: JobEventData | BatchEventData

    @model_validator(mode="after")
    def _type_matches_status(self) -> Self:
        expected: EventType | None
        if isinstance(self.data, JobEventData) and self.type == REVIEWED_EVENT:
            expected = REVIEWED_EVENT if self.data.status in REVIEWED_STATUSES else None
        elif isinstance(self.data, JobEventData):
            expected = JOB_EVENT.get(self.data.status)
        else:
            expected = BATCH_EVENT.get(self.data.status)
        if self.type != expected:
            raise ValueError(f"a {self.data.status} {type(self.data).__name__} is event "
                             f"{expected!r}, not {self.type!r}")
        return self

    @field_serializer("timestamp", when_used="json")
    def _isoformat(self, value: datetime) -> str:
        # ``isoformat`` (``+00:00``), not pydantic's ``Z``: the body receivers get and verify
        # signatures over stays byte for byte what it has always been.
        return value.isoformat()

    @property
    def webhook_id(self) -> str:
        """The ``webhook-id`` of this event (see :func:`event_id`)."""
        entity = self.data.job_id if isinstance(self.data, JobEventData) else self.data.batch_id
        return event_id(self.type, entity)


def job_event(*, job_id: str, batch_id: str | None, custom_id: str | None, status: JobStatus,
              stop_reason: str | None, at: datetime) -> WebhookEvent:
    """The validated event of a job that ended with ``status`` at ``at`` (aware). Raises
    ValueError (a pydantic ValidationError) for a status a job does not end with."""
    if status not in JOB_EVENT:
        raise ValueError(f"a job in {status!r} has not ended; ended: "
                         + ", ".join(sorted(JOB_EVENT)))
    data = JobEventData(job_id=job_id, batch_id=batch_id, custom_id=custom_id, status=status,
                        stop_reason=stop_reason, results_url=JOB_PATH.format(job_id=job_id))
    return WebhookEvent(type=JOB_EVENT[status], timestamp=at, data=data)


def reviewed_event(*, job_id: str, batch_id: str | None, custom_id: str | None,
                   status: JobStatus, stop_reason: str | None, at: datetime) -> WebhookEvent:
    """The validated ``job.reviewed`` event of a job a reviewer resolved at ``at``: ``status``
    is ``completed`` (answered) or ``rejected``. Raises ValueError for any other status."""
    if status not in REVIEWED_STATUSES:
        raise ValueError(f"a reviewed job is completed or rejected, not {status!r}")
    data = JobEventData(job_id=job_id, batch_id=batch_id, custom_id=custom_id, status=status,
                        stop_reason=stop_reason, results_url=JOB_PATH.format(job_id=job_id))
    return WebhookEvent(type=REVIEWED_EVENT, timestamp=at, data=data)


def batch_event(*, batch_id: str, status: BatchStatus, counts: BatchEventCounts,
                at: datetime) -> WebhookEvent:
    """The validated event of a batch that finished with ``status`` at ``at`` (aware). Raises
    ValueError for a status a batch does not finish with."""
    if status not in BATCH_EVENT:
        raise ValueError(f"a batch in {status!r} has not finished; finished: "
                         + ", ".join(sorted(BATCH_EVENT)))
    data = BatchEventData(batch_id=batch_id, status=status, counts=counts,
                          results_url=BATCH_RESULTS_PATH.format(batch_id=batch_id),
                          errors_url=BATCH_ERRORS_PATH.format(batch_id=batch_id))
    return WebhookEvent(type=BATCH_EVENT[status], timestamp=at, data=data)


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
