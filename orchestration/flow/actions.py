"""What to do: the actions a decision returns, in the order they must happen.

Two kinds. **Ledger writes** (:data:`LEDGER_WRITES`) are applied in order in one ledger
transaction; a :class:`Charge` the budget refuses stops the list there: nothing after it runs,
and the decision is asked again with a :class:`~ragq.orchestration.flow.events.Refused` event.
**Effects** run after that transaction commits, in order: at most one piece of *work* (a model
call, a probe, a search, a plan-cache lookup), always last, whose answer is the step's next
event, and messages to the queue (enqueue, continue, reply, webhooks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ragq.orchestration.flow.events import RetrieveDue
from ragq.schemas.cache import CachedHit
from ragq.schemas.flow import (
    DraftAnswer,
    Evidence,
    Plan,
    QuestionClass,
    SourceChoice,
    SourceProfile,
    Strategy,
    TicketReading,
    Usage,
    Verification,
)
from ragq.schemas.metadata import MetadataField, MetadataFilter
from ragq.schemas.statuses import BudgetDimension, JobStatus, SubQueryOrigin, SubQueryStatus
from ragq.schemas.ticket import Budget

Amounts = Mapping[BudgetDimension, int | Decimal]


class Action:
    """Base of every action."""


# --- ledger writes ------------------------------------------------------------------------


@dataclass(frozen=True)
class SetStatus(Action):
    """Move the (open) job to ``status``; a job that already ended stays as it is."""

    status: JobStatus


@dataclass(frozen=True)
class OpenBudget(Action):
    """Give the job ``budget`` under profile ``route``: create its budget row (the latency
    deadline starts now), or move an existing row to this profile (deadline from its start)."""

    route: str
    budget: Budget


@dataclass(frozen=True)
class Charge(Action):
    """Pay ``amounts`` before the work they stand for, once per ``key`` (a redelivered step
    replays the first outcome). ``force`` records spend that already happened (a model call's
    real tokens) whatever the limits, so the ledger holds the truth and the next charge is
    refused."""

    key: str
    amounts: Amounts
    step: str
    attempt: int = 0
    force: bool = False


@dataclass(frozen=True)
class RecordModelCall(Action):
    """One model-role call: a ledger row per attempt the provider reports (``{key}#{n}``),
    else one row for the call."""

    role: str
    call_key: str
    usage: Usage
    provider: str


@dataclass(frozen=True)
class RecordReading(Action):
    """What the ticket reader found: the asks (each recorded as one), the ticket's context and
    its noise."""

    reading: TicketReading


@dataclass(frozen=True)
class RecordAskRoute(Action):
    """The router's class for one ask, the path it takes and why."""

    index: int
    question_class: QuestionClass
    route: str
    reason: str


@dataclass(frozen=True)
class RecordAskPlan(Action):
    """One ask's validated plan, the repairs made to the proposed one, and whether it came from
    the plan cache."""

    index: int
    plan: Plan
    repairs: str | None
    cache_hit: bool


@dataclass(frozen=True)
class RecordRoute(Action):
    """The job's class, the path its budget follows and why (for a ticket: over its asks)."""

    question_class: QuestionClass
    route: str
    reason: str


@dataclass(frozen=True)
class NewSubQuery:
    """A sub-query to record: its index in its round, text, dependencies and why it exists."""

    index: int
    text: str
    depends_on: tuple[int, ...] = ()
    origin: SubQueryOrigin = SubQueryOrigin.PLAN
    reason: str = ""
    ask: int | None = None


@dataclass(frozen=True)
class RecordPlan(Action):
    """The validated plan of round 0, with the repairs made to the proposed one."""

    plan: Plan
    strategy: Strategy
    repairs: str | None
    cache_hit: bool


@dataclass(frozen=True)
class RecordSubQueries(Action):
    """A round's sub-queries, created once each."""

    round: int
    items: tuple[NewSubQuery, ...]


@dataclass(frozen=True)
class SetQueryText(Action):
    """What a sub-query's latest attempt searches (its text with dependencies filled in, or a
    rewrite)."""

    sub_query_id: str
    text: str


@dataclass(frozen=True)
class RecordSourceRoute(Action):
    """Where a sub-query was sent, when its job may search several sources: the sources
    chosen, the score of each one offered, why, and who chose (the provider's name)."""

    sub_query_id: str
    choice: SourceChoice
    provider: str


@dataclass(frozen=True)
class RecordRetrieval(Action):
    """A retrieval request and its hits as evidence. ``dedup_of`` names the earlier request
    whose hits these are (nothing was searched); ``cache_hit``: they came from the cache;
    ``sources``: the collections searched, when the job may search several."""

    sub_query_id: str
    attempt: int
    query: str
    key: str
    top_k: int
    acl: tuple[str, ...]
    hits: tuple[CachedHit, ...]
    latency_ms: int = 0
    dedup_of: str | None = None
    cache_hit: bool = False
    sources: tuple[str, ...] = ()
    #: The metadata filters of the request (issue 37): each proposal, kept or dropped and why,
    #: and, when the filtered search was given up, why (``fallback``); empty without any.
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordCheck(Action):
    """A sufficiency check of one attempt, and the rewrite it chose when it asked for one."""

    sub_query_id: str
    request_id: str | None
    attempt: int
    sufficient: bool
    score: float
    reason: str
    rewrite: str | None = None


@dataclass(frozen=True)
class FinishSubQuery(Action):
    """A sub-query's end: its status and what it found (for its dependents)."""

    sub_query_id: str
    status: SubQueryStatus
    finding: str | None = None
    alternatives: tuple[str, ...] = ()  # the finder's other candidates, best first


@dataclass(frozen=True)
class RecordVerification(Action):
    """A verifier verdict after ``round``, with the follow-ups kept and the new evidence the
    round brought."""

    round: int
    verdict: Verification
    follow_ups: tuple[str, ...]
    new_evidence: int


@dataclass(frozen=True)
class MarkInContext(Action):
    """Flag the evidence rows that reached the answer model (and only them)."""

    evidence_ids: tuple[str, ...]


@dataclass(frozen=True)
class RecordAnswer(Action):
    """The answer, its citations (each pointing at the evidence row of its chunk) and the
    contradictions it reports."""

    draft: DraftAnswer
    evidence_by_chunk: Mapping[str, str]


@dataclass(frozen=True)
class Escalation:
    """Why a job goes to the review queue, and the status it would have ended with."""

    reasons: tuple[str, ...]
    outcome: JobStatus


@dataclass(frozen=True)
class FinishJob(Action):
    """End the job, once: its status, why it stopped, and its result line built from the
    ledger. The job's (and, when it is the last, its batch's) webhook events are recorded in
    the same transaction. ``review`` (with status ``needs_review``) puts it in the review
    queue."""

    status: JobStatus
    stop_reason: str
    context_tokens: int = 0
    error: Mapping[str, Any] | None = None
    review: Escalation | None = None


@dataclass(frozen=True)
class RecordNextStep(Action):
    """The job-level message this step hands the job on with, kept on the job: a job whose
    message was lost (a broker or worker that died at the wrong moment) is resumed by sending
    it again (see :mod:`ragq.ledger.stalls`). Added by ``decide``, never by a handler."""

    step: Enqueue | EnqueueLayer


LEDGER_WRITES: tuple[type[Action], ...] = (
    SetStatus, OpenBudget, Charge, RecordModelCall, RecordReading, RecordAskRoute,
    RecordAskPlan, RecordRoute, RecordPlan, RecordSubQueries,
    SetQueryText, RecordSourceRoute, RecordRetrieval, RecordCheck, FinishSubQuery,
    RecordVerification, MarkInContext, RecordAnswer, FinishJob, RecordNextStep,
)


# --- work: its answer is the step's next event ---------------------------------------------


@dataclass(frozen=True)
class RoleRequest:
    """Base of what a model role is asked."""


@dataclass(frozen=True)
class ReadRequest(RoleRequest):
    text: str


@dataclass(frozen=True)
class RouteRequest(RoleRequest):
    question: str


@dataclass(frozen=True)
class SourceRouteRequest(RoleRequest):
    query: str
    sources: tuple[SourceProfile, ...]


@dataclass(frozen=True)
class PlanRequest(RoleRequest):
    """``fields``: the declared metadata fields of the one source the job searches (none when
    it searches several, or its source declares none), which a sub-query may filter on."""

    question: str
    max_sub_queries: int
    context: str = ""
    fields: tuple[MetadataField, ...] = ()


@dataclass(frozen=True)
class CheckRequest(RoleRequest):
    """The merged check: ``evidence`` is the latest pass, ``found`` everything the sub-query
    found (what its finding reads), ``attempt`` and ``previous`` what a rewrite needs."""

    sub_query: str
    evidence: tuple[Evidence, ...]
    found: tuple[Evidence, ...] = ()
    attempt: int = 1
    previous: tuple[str, ...] = ()




@dataclass(frozen=True)
class VerifyRequest(RoleRequest):
    """``missing``: the evidence contract's keys the plan's searches did not answer, what the
    verifier's follow-ups should find."""

    question: str
    evidence: tuple[Evidence, ...]
    findings: tuple[str, ...]
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class RerankRequest(RoleRequest):
    question: str
    candidates: tuple[Evidence, ...]
    asks: tuple[str, ...] = ()


@dataclass(frozen=True)
class SynthesizeRequest(RoleRequest):
    question: str
    context: tuple[Evidence, ...]
    strategy: str
    findings: tuple[str, ...]
    asks: tuple[str, ...] = ()
    chain_ends: tuple[str, ...] = ()


@dataclass(frozen=True)
class CallRole(Action):
    """Ask a model role (already paid for by the charge before it). ``context`` travels to the
    answer event for the decision that reads it."""

    role: str
    call_key: str
    reserve: int
    request: RoleRequest
    context: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DecideLocally(Action):
    """Play a role in process, without a model (the router's classifier, the reranker's
    scorer): the answer is the role's contract, and no model call is recorded or paid."""

    call: CallRole


@dataclass(frozen=True)
class AnswerExtractively(Action):
    """Answer in process, without a model (the budget refused the synthesizer's call)."""

    call: CallRole


@dataclass(frozen=True)
class LookUpPlan(Action):
    """Ask the plan cache for the plan of ask ``ask``."""

    question: str
    max_sub_queries: int
    ask: int = 0


@dataclass(frozen=True)
class Probe(Action):
    """Embed ``query``; find an earlier request among ``candidates`` ((request id, query) of
    at least ``top_k`` hits) within ``similarity``; else read the evidence cache of collection
    ``cache`` under ``key`` (None: a search of several sources, which the cache does not
    keep). ``question`` (the job's whole question, or None) is embedded with the query, for
    the search to score each hit against it (``Evidence.question_score``)."""

    request: RetrieveDue
    query: str
    key: str
    candidates: tuple[tuple[str, str], ...]
    similarity: float
    cache: str | None = None
    question: str | None = None


@dataclass(frozen=True)
class Search(Action):
    """Search the vector store (already paid for), filtered by the job's ACL: each of
    ``collections`` for its best ``top_k`` (in parallel; the job's collection when empty).
    ``question_vector`` (None: none) is scored against each hit too, see
    :meth:`~vectorstore.base.VectorStore.search`."""

    request: RetrieveDue
    query: str
    vector: Sequence[float]
    top_k: int
    collections: tuple[str, ...] = ()
    question_vector: Sequence[float] | None = None
    #: Validated metadata filters (issue 37); a filtered search whose hits are weak under
    #: ``fallback_min_top_score`` is given up for the same search unfiltered.
    filters: tuple[MetadataFilter, ...] = ()
    fallback_min_top_score: float = 0.0


WORK: tuple[type[Action], ...] = (CallRole, DecideLocally, AnswerExtractively, LookUpPlan, Probe,
                                  Search)


# --- messages and side effects --------------------------------------------------------------


@dataclass(frozen=True)
class CachePlan(Action):
    """Keep a planner's plan for the next job asking the same question."""

    question: str
    plan: Plan
    max_sub_queries: int


@dataclass(frozen=True)
class CacheEvidence(Action):
    """Keep a search's hits for other jobs making the same request, stamped with the
    requester's ACL (see :func:`ragq.orchestration.cache_check.evidence_entry`)."""

    key: str
    hits: tuple[CachedHit, ...]
    acl: tuple[str, ...]
    collection: str = ""  # whose cache (empty: the job's collection)


@dataclass(frozen=True)
class DropCachedEvidence(Action):
    """Forget a cached entry the check refused (stale, or for another ACL)."""

    key: str
    reason: str
    collection: str = ""  # whose cache (empty: the job's collection)


@dataclass(frozen=True)
class Enqueue(Action):
    """Send a job-level step (``args`` follow the job id)."""

    task: str  # a name of the Task table
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class EnqueueLayer(Action):
    """Send one layer as a chord: every sub-query (by index in ``round``) searched and checked
    in parallel, then ``after_layer``."""

    round: int
    layer: int
    indexes: tuple[int, ...]


@dataclass(frozen=True)
class Continue(Action):
    """Hand the rest of this sub-query's pipeline to ``task`` (the chord waits for it)."""

    task: str  # a name of the Task table
    args: tuple[Any, ...]


@dataclass(frozen=True)
class Reply(Action):
    """The pipeline's result, as the layer's chord body receives it."""

    value: Mapping[str, Any]


@dataclass(frozen=True)
class SendWebhooks(Action):
    """Send the webhook events the job's ending recorded (its own, its batch's)."""


@dataclass(frozen=True)
class StartWaiting(Action):
    """The job's ending freed its place among the open jobs: start the next waiting ones."""


def validate_order(actions: Sequence[Action]) -> None:
    """Raise ValueError unless ledger writes come first and work, if any, comes last and alone:
    the runner relies on it, and the property tests check every decision with it."""
    seen_effect = False
    for position, action in enumerate(actions):
        if isinstance(action, LEDGER_WRITES):
            if seen_effect:
                raise ValueError(f"ledger write {action!r} after an effect")
        else:
            seen_effect = True
            if isinstance(action, WORK) and position != len(actions) - 1:
                raise ValueError(f"work {action!r} is not the last action")
