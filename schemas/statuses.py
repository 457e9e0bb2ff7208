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
    """Lifecycle of a job (SPEC, "The life of a job")."""

    QUEUED = "queued"
    ROUTING = "routing"
    PLANNING = "planning"
    RETRIEVING = "retrieving"
    VERIFYING = "verifying"
    SYNTHESIZING = "synthesizing"
    COMPLETED = "completed"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    BUDGET_EXHAUSTED = "budget_exhausted"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL_JOB_STATUSES = frozenset(
    {
        JobStatus.COMPLETED,
        JobStatus.INSUFFICIENT_EVIDENCE,
        JobStatus.BUDGET_EXHAUSTED,
        JobStatus.FAILED,
        JobStatus.CANCELLED,
    }
)
"""Statuses a job never leaves; a batch is finished when all its jobs reach one."""


class BudgetDimension(StrEnum):
    """What a budget limits (SPEC C9); ``job_budgets`` has a limit_x/used_x column pair for each."""

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
