"""Tickets (batch input lines), their budgets, and what a job returns (docs/formats.md)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragq.schemas.document import acl_labels
from ragq.schemas.text import reject_bad_input

#: Default of RAGQ_MAX_QUESTION_CHARS: support tickets with pasted logs run to several thousand
#: characters (the longest of the evaluation tickets is 7,368), so the default leaves room.
MAX_QUESTION_CHARS = 20_000
#: What RAGQ_MAX_QUESTION_CHARS may be raised to; a ticket is never longer than this.
QUESTION_CHARS_CAP = 200_000
ROUTE_PATHS = ("simple", "bounded", "full", "escalate")
ALL_SOURCES: Final = "all"
# Which sources (collections) a job may search: names, or every source of the tenant.
SourceSelection = tuple[str, ...] | Literal["all"]


def sources_from_text(text: str) -> SourceSelection:
    """A selection written as an option or a query field: ``all``, or comma-separated names.
    Raises ValueError for one that names nothing (``","``, blanks): an empty selection would
    otherwise read as "no restriction"."""
    if text.strip() == ALL_SOURCES:
        return ALL_SOURCES
    selection = check_source_names(tuple(text.split(",")))
    assert selection is not None
    return selection


def check_source_names(value: SourceSelection | None) -> SourceSelection | None:
    """A selection of sources: ``"all"``, or one or more distinct, non-blank names."""
    if value is None or value == ALL_SOURCES:
        return value
    names = tuple(v.strip() for v in value)
    if not names or any(not n for n in names):
        raise ValueError('sources must be "all" or a list of one or more source names')
    if len(set(names)) != len(names):
        raise ValueError(f"sources names a source twice: {list(names)}")
    return names


class Priority(StrEnum):
    """Where a job stands in its tenant's share of the waiting line (issue 36): interactive
    jobs (someone waits on the answer) go ahead of bulk ones (a backlog)."""

    INTERACTIVE = "interactive"
    BULK = "bulk"


PRIORITY_DESCRIPTION = ('"interactive" goes ahead of "bulk" within the tenant\'s share of the '
                        "waiting line. Default: the batch's priority (itself `bulk` unless set) "
                        "for a batch's ticket, `interactive` for a single job (`POST /v1/jobs`, "
                        "`ragq ask`).")


class Budget(BaseModel):
    """Per-job limits; every key optional, unknown keys rejected (docs/formats.md). Strict:
    ``true`` is not 1 and ``"20"`` is not 20, and NaN or infinity is no amount."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    max_steps: int | None = Field(None, ge=1, le=10_000)
    max_retrieval_calls: int | None = Field(None, ge=1, le=10_000)
    max_unique_queries: int | None = Field(None, ge=1, le=10_000)
    max_rerank_calls: int | None = Field(None, ge=0, le=10_000)
    max_context_tokens: int | None = Field(None, ge=1, le=1_000_000)
    max_llm_tokens: int | None = Field(None, ge=1, le=100_000_000)
    max_cost_usd: float | None = Field(None, ge=0, le=10_000)
    max_latency_ms: int | None = Field(None, ge=1, le=86_400_000)


class BudgetProfiles(BaseModel):
    """Budgets per route (settings); a route left unset keeps its built-in profile."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    simple: Budget | None = None
    bounded: Budget | None = None
    full: Budget | None = None
    escalate: Budget | None = None


DEFAULT_ACL_RULE = ("A ticket without `acl` reads with its submitter's labels: the API key's "
                    "ACL, or `[\"public\"]` without a key (`ragq submit`, `ragq ask`, "
                    "`ragq eval`).")
"""The one default-ACL rule, word for word in docs/formats.md, docs/guide.md and the OpenAPI
document (a test checks all three)."""
ACL_DESCRIPTION = ("The labels this job may read: each stripped and kept once; an empty list "
                   "or a blank label is refused (`invalid_ticket`). With an API key, labels "
                   "outside the key's are dropped, and none left is `acl_not_allowed`. "
                   + DEFAULT_ACL_RULE)


class Ticket(BaseModel):
    """One question to answer. ``acl`` None means "not given": the submitter's default applies
    (:func:`ragq.submission.access.capped_acl`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    custom_id: str = Field(min_length=1, max_length=512)
    question: str = Field(min_length=1, max_length=QUESTION_CHARS_CAP)
    acl: tuple[str, ...] | None = Field(None, description=ACL_DESCRIPTION)
    budget: Budget | None = None
    route: str | None = None
    sources: SourceSelection | None = Field(
        None, description='The sources (collections) this job may search, or "all" of the '
                          "tenant's; default: the batch's collection alone.")
    metadata: dict[str, Any] = Field(default_factory=dict)
    webhook_url: str | None = Field(None, max_length=2048,
                                    description="Where to POST job.* events of this ticket.")
    priority: Priority | None = Field(None, description=PRIORITY_DESCRIPTION)
    # Evaluation files carry these; they never reach the flow.
    gold_doc_ids: list[str] | None = None
    answer: str | None = None
    answer_aliases: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_bad_text(cls, data: Any) -> Any:
        return reject_bad_input(data)

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question must not be blank")
        return value.strip()

    @field_validator("acl")
    @classmethod
    def _acl_labels(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if value is None else acl_labels(value)

    @field_validator("sources")
    @classmethod
    def _source_names(cls, value: SourceSelection | None) -> SourceSelection | None:
        return check_source_names(value)

    @field_validator("route")
    @classmethod
    def _known_route(cls, value: str | None) -> str | None:
        if value is not None and value not in ROUTE_PATHS:
            raise ValueError(f"route must be one of {', '.join(ROUTE_PATHS)}, got {value!r}")
        return value


class ResultCitation(BaseModel):
    doc_id: str
    chunk_id: str
    quote: str | None = None
    source: str | None = None  # the collection the cited chunk was found in


class ResultUsage(BaseModel):
    """What a job used. ``llm_calls`` counts requests sent to a model; a role answered by its
    fallback instead (no request, or none usable) is counted in ``fallbacks``."""

    steps: int = 0
    llm_calls: int = 0
    fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retrieval_calls: int = 0
    retrieval_calls_by_source: dict[str, int] = Field(default_factory=dict)
    unique_queries: int = 0
    rerank_calls: int = 0
    context_tokens: int = 0
    context_chunks: int = 0
    cost_usd: float = 0.0
    latency_ms: int = 0


class AskResult(BaseModel):
    """One ask of a ticket in its result: ``answered``, ``insufficient_evidence`` (searched,
    but the evidence does not answer it), or ``incomplete`` (the job stopped before its search
    was done; ``reason`` says why)."""

    index: int
    text: str
    status: str
    answer: str | None = None
    citations: list[ResultCitation] = Field(default_factory=list)
    reason: str | None = None


class JobResult(BaseModel):
    """One line of a batch's results JSONL."""

    custom_id: str | None
    job_id: str
    status: str
    route: str | None = None
    answer: str | None = None
    extractive: bool = False
    citations: list[ResultCitation] = Field(default_factory=list)
    evidence_doc_ids: list[str] = Field(default_factory=list)
    context_doc_ids: list[str] = Field(default_factory=list)
    contradictions: list[dict[str, Any]] = Field(default_factory=list)
    stop_reason: str | None = None
    usage: ResultUsage = Field(default_factory=ResultUsage)
    asks: list[AskResult] = Field(default_factory=list)
    error: dict[str, Any] | None = None
    review: dict[str, Any] | None = Field(
        None, description="Escalated jobs only: why (reasons) and the status it would have "
        "ended with (outcome).")
    reviewed: dict[str, Any] | None = Field(
        None, description="Resolved reviews only: decision, reviewer, at, note, draft_answer.")
