"""Request and response bodies of the HTTP API (SPEC "Contracts"); the OpenAPI document is
generated from these. No I/O."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragq.schemas.ticket import Budget, SourceSelection, check_source_names

# The URL layout of the HTTP API (SPEC "Contracts"), as path templates. Routes are declared with
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
SOURCES_PATH = "/v1/sources"
HEALTH_PATH = "/healthz"
METRICS_PATH = "/metrics"


class BatchCreate(BaseModel):
    """``POST /v1/batches`` as JSON (a JSONL upload carries the same options as query fields)."""

    model_config = ConfigDict(extra="forbid")

    tickets: list[dict[str, Any]] = Field(
        description="Tickets in the SPEC ticket format; a malformed one fails alone, by index.")
    collection: str | None = None
    sources: SourceSelection | None = Field(
        None, description='Restrict every ticket to these sources, or "all" of the tenant\'s.')
    webhook_url: str | None = Field(None, max_length=2048)
    budget: Budget | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

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


class BatchCounts(BaseModel):
    total: int
    finished: int
    completed: int
    insufficient_evidence: int
    budget_exhausted: int
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
    """``POST /v1/jobs``: one question outside any batch."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1)
    custom_id: str | None = Field(None, max_length=512)
    acl: list[str] | None = Field(None, description="Intersected with the API key's ACL.")
    collection: str | None = None
    budget: Budget | None = None
    route: str | None = None
    sources: SourceSelection | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    webhook_url: str | None = Field(None, max_length=2048)


class JobOut(BaseModel):
    """A job: status, route, and its result line once it ended."""

    id: str
    object: str = "job"
    batch_id: str | None = None
    custom_id: str | None = None
    status: str
    route: str | None = None
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


class ErrorBody(BaseModel):
    code: str
    message: str
    line: int | None = None
    limit: str | None = None


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
