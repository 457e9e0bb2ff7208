"""Cost reports read from the ledger: one job's charges, one batch's totals.

Pure contracts, built by :mod:`ledger.reports` and shaped by the CLI and the API. Money is US
dollars as ``float`` rounded to 8 decimals (the ledger stores 8); token and call counts are ints.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field

UNROUTED = "none"
"""The route key of jobs that ended (or wait) before routing chose one."""


class _Report(BaseModel):
    model_config = ConfigDict(frozen=True)


class ChargeEntry(_Report):
    """One budget charge, granted or refused, as the ledger recorded it."""

    at: datetime
    step: str | None
    dimension: str
    amount: float
    outcome: str
    attempt: int
    idempotency_key: str


class ModelCallEntry(_Report):
    """One model-provider call of a job; ``latency_ms`` is None when it was not measured."""

    at: datetime
    role: str
    provider: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_ms: int | None
    status: str


class SourceRouteEntry(_Report):
    """Where the source router sent one sub-query of a job over several sources: the sources
    chosen, the score of each offered source, why, and who chose (the provider)."""

    round: int
    index: int
    text: str
    sources: list[str]
    scores: dict[str, float]
    reason: str
    by: str


class FilterEntry(_Report):
    """The metadata filters of one search of a sub-query (issue 37): each constraint proposed
    (``decisions``: the proposal, kept or dropped, why, by whom) and, when the filtered search
    was weak and the unfiltered one answered instead, why (``fallback``)."""

    round: int | None
    index: int | None
    attempt: int
    query: str
    decisions: list[dict[str, Any]]
    fallback: str | None = None


class DimensionTotal(_Report):
    """One budget dimension of a job: its limit (None = unlimited), what was granted against it
    and how many charges were refused."""

    dimension: str
    limit: float | None
    granted: float
    refused_charges: int


class VerificationEntry(_Report):
    """One verdict on whether the job's evidence is enough: the verifier's, or the evidence
    contract's check (its reason names the contract) that ended the loop without one."""

    round: int
    sufficient: bool
    confidence: float
    reason: str
    follow_up_queries: list[str]


class JobLedger(_Report):
    """Every charge of a job in the order it was made, its model calls, and its budget."""

    job_id: str
    batch_id: str | None
    custom_id: str | None
    status: str
    route: str | None
    stop_reason: str | None
    exhausted_dimension: str | None
    profile: str | None = Field(description="Budget profile; None when the job has no budget.")
    created_at: datetime
    finished_at: datetime | None
    charges: list[ChargeEntry]
    model_calls: list[ModelCallEntry]
    dimensions: list[DimensionTotal]
    retrieval_calls: int
    retrieval_cache_hits: int
    source_routes: list[SourceRouteEntry] = Field(default_factory=list)
    verifications: list[VerificationEntry] = Field(default_factory=list)
    metadata_filters: list[FilterEntry] = Field(default_factory=list)

    # pydantic's documented form: mypy refuses any decorator above @property (python/mypy#1362)
    @computed_field  # type: ignore[prop-decorator]
    @property
    def cost_usd(self) -> float:
        """Granted ``cost_usd`` charges, in USD."""
        return next((d.granted for d in self.dimensions if d.dimension == "cost_usd"), 0.0)


class CostTotals(_Report):
    """What a set of jobs (a batch, or one route of it) spent and how it ended.

    ``cost_usd`` is what the budget granted (model, retrieval and rerank calls);
    ``model_cost_usd`` is what the providers metered for model calls alone. Rates are None when
    their denominator is zero.
    """

    jobs: int
    jobs_by_status: dict[str, int]
    cost_usd: float
    model_cost_usd: float
    prompt_tokens: int
    completion_tokens: int
    model_calls: int
    retrieval_calls: int
    retrieval_cache_hits: int
    granted: dict[str, float] = Field(description="Granted charges per budget dimension.")
    finished_jobs: int
    budget_exhausted_jobs: int
    budget_exhaustion_rate: float | None = Field(
        description="budget_exhausted jobs / finished jobs.")
    exhausted_dimensions: dict[str, int] = Field(
        description="How many jobs ran out of each dimension (from stop_reason).")
    escalated_jobs: int = Field(
        0, description="Jobs escalated to the review queue, waiting or resolved.")
    escalation_rate: float | None = Field(
        None, description="escalated jobs / finished jobs.")
    cost_per_completed_job: float | None = Field(description="cost_usd / completed jobs.")
    cost_per_job_mean: float | None = Field(description="cost_usd / jobs.")

    # pydantic's documented form: mypy refuses any decorator above @property (python/mypy#1362)
    @computed_field  # type: ignore[prop-decorator]
    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


class BatchReport(_Report):
    """A batch's totals, and the same figures per route (``"none"`` for unrouted jobs)."""

    batch_id: str
    status: str
    created_at: datetime
    finished_at: datetime | None
    totals: CostTotals
    routes: dict[str, CostTotals]
