"""Request and response bodies of the HTTP API (docs/http.md); the OpenAPI document is
generated from these. No I/O."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragq.schemas.metadata import MetadataSchema
from ragq.schemas.text import reject_bad_input
from ragq.schemas.ticket import (
    ACL_DESCRIPTION,
    DEFAULT_ACL_RULE,
    PRIORITY_DESCRIPTION,
    Budget,
    Priority,
    SourceSelection,
    check_source_names,
)

BATCH_PRIORITY_DESCRIPTION = ('"interactive" or "bulk": the priority of every ticket that names '
                              "none; bulk unless set (a backlog waits behind tickets someone "
                              "waits on, within the tenant's share of the waiting line).")
COLLECTION_DESCRIPTION = (
    "The collection a ticket without `sources` searches; one that holds no document is "
    "refused (`unknown_collection`). Not given: RAGQ_COLLECTION when it holds documents, else "
    "every source of the tenant that does.")

# The URL layout of the HTTP API (docs/http.md), as path templates. Routes are declared with
# them and webhook payloads point at them (``JOB_PATH.format(job_id=...)``), so they cannot drift.

BATCHES_PATH = "/v1/batches"
BATCH_PATH = BATCHES_PATH + "/{batch_id}"
BATCH_RESULTS_PATH = BATCH_PATH + "/results"
BATCH_ERRORS_PATH = BATCH_PATH + "/errors"
BATCH_CANCEL_PATH = BATCH_PATH + "/cancel"
JOBS_PATH = "/v1/jobs"
JOB_PATH = JOBS_PATH + "/{job_id}"
JOB_EVIDENCE_PATH = JOB_PATH + "/evidence"
JOB_LEDGER_PATH = JOB_PATH + "/ledger"
REVIEWS_PATH = "/v1/review"
REVIEW_PATH = REVIEWS_PATH + "/{job_id}"
SOURCES_PATH = "/v1/sources"
SOURCE_PATH = SOURCES_PATH + "/{name}"
SOURCE_CONFIRM_PATH = SOURCE_PATH + "/confirm"
TENANTS_PATH = "/v1/tenants"
TENANT_PATH = TENANTS_PATH + "/{tenant}"
HEALTH_PATH = "/healthz"
REF_TEMPLATE = "#/components/schemas/{model}"
"""Where a model of the OpenAPI document is, for bodies documented by hand."""
METRICS_PATH = "/metrics"


class BatchCreate(BaseModel):
    """``POST /v1/batches`` as JSON (a JSONL upload carries the same options as query fields)."""

    model_config = ConfigDict(extra="forbid")

    tickets: list[dict[str, Any]] = Field(
        description="Tickets in the ticket format (JobCreate without `collection`); a "
                    "malformed one fails alone, by index, with its code in the errors file. "
                    + DEFAULT_ACL_RULE)
    collection: str | None = Field(None, description=COLLECTION_DESCRIPTION)
    sources: SourceSelection | None = Field(
        None, description='Restrict every ticket to these sources, or "all" of the tenant\'s.')
    webhook_url: str | None = Field(None, max_length=2048)
    budget: Budget | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    priority: Priority = Field(Priority.BULK, description=BATCH_PRIORITY_DESCRIPTION)

    @model_validator(mode="before")
    @classmethod
    def _no_bad_text(cls, data: Any) -> Any:
        """Lone surrogates, NaN, runaway nesting outside ``tickets`` refuse the request; inside
        it they fail their ticket alone."""
        if isinstance(data, dict):
            reject_bad_input({k: v for k, v in data.items() if k != "tickets"})
        return data

    @field_validator("sources")
    @classmethod
    def _source_names(cls, value: SourceSelection | None) -> SourceSelection | None:
        return check_source_names(value)


class SourceOut(BaseModel):
    """A source: a collection, what it holds in words, its documents, and how often its chunks
    reached an answer (the source router's prior)."""

    name: str
    description: str
    documents: int
    hits: int


class SourceList(BaseModel):
    object: str = "list"
    data: list[SourceOut]


class SourceDetailOut(SourceOut):
    """A source with its metadata schema: the fields a sub-query's constraints may filter on
    (an ``inferred`` field is shown and not filtered on until it is confirmed)."""

    metadata_schema: MetadataSchema


class ConfirmFieldsIn(BaseModel):
    """The inferred fields to confirm; empty or absent: every field of the source."""

    model_config = ConfigDict(extra="forbid")

    fields: list[str] = Field(default_factory=list, max_length=200)


class TenantOut(BaseModel):
    """A tenant's share of the waiting line and what it holds there now (issue 36)."""

    tenant: str
    weight: int
    max_open_jobs: int | None
    open_jobs: int
    waiting_jobs: int


class TenantList(BaseModel):
    object: str = "list"
    data: list[TenantOut]


class TenantShareIn(BaseModel):
    """``PUT /v1/tenants/{tenant}``: a field left out keeps its value; ``max_open_jobs``
    null is no limit of the tenant's own (only the window limits it)."""

    model_config = ConfigDict(extra="forbid")

    weight: int | None = Field(None, ge=1, le=1000, description="Share of the window against "
                               "the other tenants' weights (default 1).")
    max_open_jobs: int | None = Field(None, ge=0, le=1_000_000,
                                      description="Most jobs the tenant may have open at once.")


class BatchCounts(BaseModel):
    total: int
    finished: int
    completed: int
    insufficient_evidence: int
    budget_exhausted: int
    needs_review: int = Field(0, description="Ended, waiting in the review queue.")
    rejected: int = Field(0, description="Rejected by a reviewer.")
    failed: int
    cancelled: int
    invalid: int


class BatchOut(BaseModel):
    """A batch: status after the OpenAI Batch API, counts by status, timestamps, cost so far."""

    id: str
    object: str = "batch"
    status: str
    collection: str
    input_file: str | None = None
    counts: BatchCounts
    cost_usd: float | None = None
    webhook_url: str | None = None
    webhook_secret: str | None = Field(
        None, description="Only in the creation response, when a webhook URL was given.")
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None


class BatchList(BaseModel):
    """One page of batches, newest first; pass ``last_id`` as ``after`` for the next page."""

    object: str = "list"
    data: list[BatchOut]
    first_id: str | None
    last_id: str | None
    has_more: bool


class JobCreate(BaseModel):
    """``POST /v1/jobs``: one ticket outside any batch, read by the same parser as a batch
    line (a refusal carries the code its errors-file line would); ``custom_id`` is optional."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1)
    custom_id: str | None = Field(None, max_length=512)
    acl: list[str] | None = Field(None, description=ACL_DESCRIPTION)
    collection: str | None = Field(None, description=COLLECTION_DESCRIPTION)
    budget: Budget | None = None
    route: str | None = None
    sources: SourceSelection | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    webhook_url: str | None = Field(None, max_length=2048)
    priority: Priority | None = Field(None, description=PRIORITY_DESCRIPTION)

    @model_validator(mode="before")
    @classmethod
    def _no_bad_text(cls, data: Any) -> Any:
        return reject_bad_input(data)


class JobOut(BaseModel):
    """A job: status, route, and its result line once it ended."""

    id: str
    object: str = "job"
    batch_id: str | None = None
    custom_id: str | None = None
    status: str
    route: str | None = None
    priority: str | None = None
    question: str
    stop_reason: str | None = None
    result: dict[str, Any] | None = None
    webhook_secret: str | None = None
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None


class CancelOut(BaseModel):
    """What a cancel did: how many open jobs it stopped, and the batch now."""

    cancelled_jobs: int
    batch: BatchOut


class ReviewItem(BaseModel):
    """A job in the review queue: the ticket, its draft answer and evidence, and why it waits
    (``reasons``: ``route:<route>``, ``contradictions``, ``low_confidence``)."""

    job_id: str
    batch_id: str | None = None
    custom_id: str | None = None
    status: str
    question: str
    route: str | None = None
    reasons: list[str]
    outcome: str = Field(description="The status the job would have ended with.")
    draft_answer: str | None = None
    citations: list[dict[str, Any]] = Field(default_factory=list)
    contradictions: list[dict[str, Any]] = Field(default_factory=list)
    evidence_doc_ids: list[str] = Field(default_factory=list)
    queued_at: datetime
    resolved: dict[str, Any] | None = Field(
        None, description="decision, reviewer, at, note, once resolved.")


class ReviewList(BaseModel):
    """``GET /v1/review``: the caller's jobs waiting for a reviewer, oldest first."""

    object: str = "list"
    data: list[ReviewItem]


class ReviewResolve(BaseModel):
    """``POST /v1/review/{job_id}``: answer the ticket (``answer``) or reject the draft
    (``reject: true``); ``reason`` (or ``note``) is kept with the resolution."""

    model_config = ConfigDict(extra="forbid")

    answer: str | None = Field(None, description="The answer to send instead of the draft.")
    reject: bool = False
    reason: str | None = Field(None, description="Why (kept in the ledger and the result).")


class ErrorBody(BaseModel):
    """What went wrong: a stable ``code``, a ``message`` naming the problem, and where."""

    code: str
    message: str
    line: int | None = None
    limit: str | None = None
    fields: list[dict[str, str]] | None = Field(
        None, description="For an invalid request: each invalid field and why.")


class ErrorOut(BaseModel):
    """Every 4xx/5xx the API raises itself."""

    error: ErrorBody


class ComponentHealth(BaseModel):
    ok: bool
    detail: str | None = None


class HealthOut(BaseModel):
    """``GET /healthz``: 200 when every component answers, 503 otherwise."""

    status: str
    components: dict[str, ComponentHealth]
