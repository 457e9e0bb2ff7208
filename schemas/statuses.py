"""The closed vocabularies of ragq: statuses, budget dimensions, origins.

Defined here, with the contracts, and stored by the ledger (which checks them in the database too).
Members are ``StrEnum`` so a plain string compares equal to its member.
"""

from __future__ import annotations

from enum import StrEnum


class BatchStatus(StrEnum):
    """Lifecycle of a batch, after the OpenAI Batch API."""

    VALIDATING = "validating"
    IN_PROGRESS = "in_progress"
    FINALIZING = "finalizing"
    COMPLETED = "completed"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"
    FAILED = "failed"


class JobStatus(StrEnum):
    """Lifecycle of a job (docs/architecture.md)."""

    QUEUED = "queued"
    ROUTING = "routing"
    PLANNING = "planning"
    RETRIEVING = "retrieving"
    VERIFYING = "verifying"
    SYNTHESIZING = "synthesizing"
    COMPLETED = "completed"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    BUDGET_EXHAUSTED = "budget_exhausted"
    NEEDS_REVIEW = "needs_review"
    REJECTED = "rejected"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL_JOB_STATUSES = frozenset(
    {
        JobStatus.COMPLETED,
        JobStatus.INSUFFICIENT_EVIDENCE,
        JobStatus.BUDGET_EXHAUSTED,
        JobStatus.NEEDS_REVIEW,
        JobStatus.REJECTED,
        JobStatus.FAILED,
        JobStatus.CANCELLED,
    }
)
"""Statuses the flow never leaves; a batch is finished when all its jobs reach one. A
``needs_review`` job has ended for its batch and its flow, but waits in the review queue: only a
reviewer's resolution moves it on, to ``completed`` or ``rejected``."""

REVIEWABLE_JOB_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.INSUFFICIENT_EVIDENCE})
"""The endings escalation may turn into ``needs_review``: a job that answered, or said it could
not. Out of budget, failed or cancelled jobs keep their status (it already says why)."""


class ReviewDecision(StrEnum):
    """How a reviewer resolved a job in the review queue."""

    ANSWERED = "answered"
    REJECTED = "rejected"


class BudgetDimension(StrEnum):
    """What a budget limits; ``job_budgets`` has a limit_x/used_x column pair for each."""

    STEPS = "steps"
    RETRIEVAL_CALLS = "retrieval_calls"
    UNIQUE_QUERIES = "unique_queries"
    RERANK_CALLS = "rerank_calls"
    CONTEXT_TOKENS = "context_tokens"
    LLM_TOKENS = "llm_tokens"
    COST_USD = "cost_usd"
    LATENCY_MS = "latency_ms"


BUDGET_STOP = "budget:"
"""Prefix of a job's ``stop_reason`` when a budget dimension ran out: ``budget:<dimension>``."""


class ChargeOutcome(StrEnum):
    """Whether a budget charge was paid or refused for lack of budget."""

    GRANTED = "granted"
    REFUSED = "refused"


class SubQueryOrigin(StrEnum):
    """Where a sub-query came from: the plan, a verifier follow-up, or a sufficiency rewrite."""

    PLAN = "plan"
    FOLLOW_UP = "follow_up"
    REWRITE = "rewrite"


class SubQueryStatus(StrEnum):
    """Progress of one sub-query through retrieval and its sufficiency checks."""

    PENDING = "pending"
    RETRIEVING = "retrieving"
    SUFFICIENT = "sufficient"
    INSUFFICIENT = "insufficient"
    FAILED = "failed"
    SKIPPED = "skipped"


class ModelCallStatus(StrEnum):
    """How a model call ended: answered, failed, or answered by a fallback."""

    OK = "ok"
    ERROR = "error"
    FALLBACK = "fallback"


class IngestStatus(StrEnum):
    """Lifecycle of an ingest run."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
